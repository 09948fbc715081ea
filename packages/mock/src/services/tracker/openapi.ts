import { reply, type MockRequest } from '../../http.js';
import type { Route } from '../../service.js';
import { API } from './common.js';

/** Where the mock serves the tracker's OpenAPI (Swagger 2.0) document, without a token, for generic clients. */
export const OPENAPI_PATH = `${API}/openapi.json`;

/**
 * The reference contract (shared/ref/shortcut-openapi.json, copied to packages/shared/src/tracker beside the contract generated from it), served as the
 * mock's own: `host` and `schemes` point at this mock, so a generic Swagger client aimed at the document
 * talks to it. The JSON is its own chunk, imported on the first request for it (never at start-up).
 */
export function openapiRoute(): Route {
  return {
    method: 'GET',
    path: OPENAPI_PATH,
    handler: async (req: MockRequest) => {
      const doc = (await import('@opsctl/shared/tracker/openapi.json', { with: { type: 'json' } })).default as Record<string, unknown>;
      const host = typeof req.headers.host === 'string' && req.headers.host ? req.headers.host : req.url.host;
      return reply.ok({ ...doc, host, schemes: [req.url.protocol === 'https:' ? 'https' : 'http'] });
    },
  };
}
