import { reply, type MockReply, type MockRequest } from '../../http.js';
import { issuer } from '../oauth/common.js';
import { invalid, notFound } from './common.js';
import { textOf } from '../../../kv/parse.js';

/** Where Google serves a discovery document: `https://drivelabels.googleapis.com/$discovery/rest?version=v2beta`. */
export const DISCOVERY_PATH = '/$discovery/rest';
export const DISCOVERY_VERSION = 'v2beta';

/** The v2beta discovery document (a copy of shared/ref/drivelabels-v2beta-discovery.json), loaded on its first request. */
export async function discoveryDocument(): Promise<Record<string, unknown>> {
  const mod = (await import('./drivelabels-v2beta-discovery.json', { with: { type: 'json' } })) as { default: Record<string, unknown> };
  return mod.default;
}

/**
 * `GET /$discovery/rest?version=v2beta`: the label service's own contract, for generic clients
 * (googleapis' `discoverAPI`). The document is Google's, with its root URLs pointed at this mock so a
 * client built from it calls the mock. No credentials needed, as at Google.
 */
export async function getDiscovery(req: MockRequest): Promise<MockReply> {
  const version = req.query.get('version');
  if (!version) throw invalid(`version is required: ${DISCOVERY_PATH}?version=${DISCOVERY_VERSION}`);
  if (version !== DISCOVERY_VERSION) throw notFound(`the label service has no discovery document for version "${version}" (only ${DISCOVERY_VERSION})`);
  const doc = await discoveryDocument();
  const root = `${issuer(req)}/`;
  return reply.ok({ ...doc, rootUrl: root, mtlsRootUrl: root, baseUrl: `${root}${textOf(doc.servicePath) ?? ''}` });
}
