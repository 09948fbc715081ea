import { reply, type MockReply, type MockRequest } from '../../http.js';
import { issuer } from '../oauth/common.js';
import { invalid, notFound } from './common.js';
import { contractOf } from './contract.js';
import { DEFAULT_LABEL_API_VERSION, LABEL_API_VERSIONS, type LabelApiVersion } from '@opsctl/shared/labels/schema.js';
import { textOf } from '@opsctl/shared/json.js';

/** Where Google serves a discovery document: `https://drivelabels.googleapis.com/$discovery/rest?version=v2`. */
export const DISCOVERY_PATH = '/$discovery/rest';
export const DISCOVERY_VERSION = DEFAULT_LABEL_API_VERSION;

/** A version's discovery document (a copy of shared/ref/drivelabels-VERSION-discovery.json), loaded on its first use. */
export async function discoveryDocument(version: LabelApiVersion = DEFAULT_LABEL_API_VERSION): Promise<Record<string, unknown>> {
  return (await contractOf(version)).doc;
}

/**
 * `GET /$discovery/rest?version=v2` (or `v2beta`): the label service's own contract, for generic clients
 * (googleapis' `discoverAPI`). The document is Google's, with its root URLs pointed at this mock so a
 * client built from it calls the mock. No credentials needed, as at Google.
 */
export async function getDiscovery(req: MockRequest): Promise<MockReply> {
  const version = req.query.get('version');
  if (!version) throw invalid(`version is required: ${DISCOVERY_PATH}?version=${DISCOVERY_VERSION}`);
  if (!(LABEL_API_VERSIONS as readonly string[]).includes(version)) {
    throw notFound(`the label service has no discovery document for version "${version}" (only ${LABEL_API_VERSIONS.join(', ')})`);
  }
  const doc = await discoveryDocument(version as LabelApiVersion);
  const root = `${issuer(req)}/`;
  return reply.ok({ ...doc, rootUrl: root, mtlsRootUrl: root, baseUrl: `${root}${textOf(doc.servicePath) ?? ''}` });
}
