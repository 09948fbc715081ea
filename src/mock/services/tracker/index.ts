import { randomBytes, randomUUID } from 'node:crypto';
import { MockError, type MockRequest } from '../../http.js';
import type { ServiceModule } from '../../service.js';
import { errorReply } from './common.js';
import { labelRoutes } from './labels.js';

export const DEFAULT_RATE_LIMIT = { limit: 200, windowMs: 60_000 };

/** The token a request carries: the `Tracker-Token` header, or the deprecated `token` query parameter. */
export function requestToken(req: MockRequest): string | undefined {
  const header = req.headers['tracker-token'];
  if (typeof header === 'string' && header) return header;
  return req.query.get('token') ?? undefined;
}

const trackerService: ServiceModule = {
  name: 'tracker',
  initState(state, options) {
    if (state.tracker) return false;
    state.tracker = {
      token: options.tracker?.token ?? `trk_${randomBytes(18).toString('base64url')}`,
      seq: 0,
      workspaceId: randomUUID(),
      labels: [],
    };
    return true;
  },
  async create(ctx) {
    const rate = ctx.options.tracker?.rateLimit ?? DEFAULT_RATE_LIMIT;
    return {
      routes: [...labelRoutes(ctx)],
      errorReply,
      async authenticate(req) {
        const token = requestToken(req);
        const valid = await ctx.store.read((s) => s.tracker.token as string);
        if (!token) throw new MockError(401, 'unauthorized', 'missing Tracker-Token header');
        if (token !== valid) throw new MockError(401, 'unauthorized', 'invalid Tracker-Token');
      },
      rateLimit: { ...rate, key: (req) => requestToken(req) ?? 'anonymous' },
    };
  },
};

export default trackerService;
