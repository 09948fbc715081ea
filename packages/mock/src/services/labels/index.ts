import { MockError, pathParam, type Handler, type MockReply, type MockRequest } from '../../http.js';
import type { Route, ServiceModule } from '../../service.js';
import type { MethodId } from '@opsctl/shared/labels/schema.js';
import { bearerToken, checkAccessToken } from '../oauth/tokens.js';
import { bearerChallenge } from '../../bearer.js';
import { LABEL_API_VERSIONS, READ_SCOPES, SCOPES, WRITE_SCOPES, apiPrefix, errorReply, limitsFrom, type Caller, type LabelApiVersion } from './common.js';
import { checkRequest, contractOf, partialResponse, type Contract } from './contract.js';
import { createLabel, deleteLabel, getCapabilities, getLabel, getLimits, labelVerb, listLabels, listLocks, type Env } from './labels.js';
import { DISCOVERY_PATH, getDiscovery } from './discovery.js';
import { labelWebPage, WEB_PAGE_PATH } from './web-page.js';
import { allowedMethods, parseLabelPath, type LabelPath } from './paths.js';
import { batchDelete, batchUpdate, deletePermission, listPermissions, upsertPermission } from './permissions.js';

/**
 * One method's request: checked against its version's document (its parameters, its body, a `fields`
 * selection) before it runs, and its answer trimmed to that selection (Google's partial response).
 */
async function answer(contract: Contract, id: MethodId, req: MockRequest, handler: Handler): Promise<MockReply> {
  checkRequest(contract, id, req);
  const trim = partialResponse(contract, id, req);
  const reply = await handler(req);
  if (trim && reply.json !== undefined && reply.status < 300) reply.json = trim(reply.json);
  return reply;
}

/** The realm of the label service's bearer challenges. */
const REALM = 'opsctl-mock';

/** The discovery method a label-path request is (its id in the table and the documents). */
function methodOf(p: LabelPath, method: string): MethodId {
  const under = 'rev' in p && p.rev ? 'labels.revisions' : 'labels';
  switch (p.kind) {
    case 'label':
      return method === 'GET' ? 'labels.get' : 'labels.delete';
    case 'verb':
      return `labels.${p.verb}`;
    case 'permissions':
      if (p.batch) return `${under}.permissions.${p.batch}`;
      if (method === 'PATCH') return `${under}.updatePermissions`;
      return method === 'GET' ? `${under}.permissions.list` : `${under}.permissions.create`;
    case 'permission':
      return `${under}.permissions.delete`;
    case 'locks':
      return `${under}.locks.list`;
  }
}

/**
 * The label-management service (Drive Labels API, v2 and v2beta: the same methods under `/v2` and
 * `/v2beta`, each request checked against its version's discovery document): labels with draft
 * revisions, publishing, disable/enable, permissions, locks, limits and capabilities. Callers need a
 * bearer token from the mock authorization server (state.oauth.accessTokens) with a label scope.
 */
const labelsService: ServiceModule = {
  name: 'labels',
  initState(state) {
    if (state.labels) return false;
    state.labels = { labels: [] };
    return true;
  },
  create(ctx) {
    const env: Env = { ctx, limits: limitsFrom(ctx.options) };
    /** A handler of one method of one version: the request is checked against that version's document first. */
    const checked =
      (version: LabelApiVersion, id: MethodId, handler: Handler): Handler =>
      async (req) =>
        answer(await contractOf(version), id, req, handler);
    const dispatch = (version: LabelApiVersion) => async (req: MockRequest) => {
      const p = parseLabelPath(req.params['*'] ?? '');
      if (!p) throw new MockError(404, 'NOT_FOUND', `no such resource: ${req.path}`);
      if (!allowedMethods(p).includes(req.method)) {
        throw new MockError(
          405,
          'UNIMPLEMENTED',
          `${req.method} is not supported on ${req.path} (use ${allowedMethods(p).join(' or ')})`,
          {},
          { allow: allowedMethods(p).join(', ') },
        );
      }
      return answer(await contractOf(version), methodOf(p, req.method), req, (r) => route(r, p));
    };
    const route = (req: MockRequest, p: LabelPath) => {
      switch (p.kind) {
        case 'label':
          return req.method === 'GET' ? getLabel(req, env, p.id, p.rev) : deleteLabel(req, env, p.id, p.rev);
        case 'verb':
          return labelVerb(req, env, p.id, p.verb);
        case 'permissions':
          if (p.batch === 'batchUpdate') return batchUpdate(req, env, p.id, p.rev);
          if (p.batch === 'batchDelete') return batchDelete(req, env, p.id, p.rev);
          return req.method === 'GET' ? listPermissions(req, env, p.id, p.rev) : upsertPermission(req, env, p.id, p.rev);
        case 'permission':
          return deletePermission(req, env, p.id, p.rev, p.permissionId);
        case 'locks':
          return listLocks(req, env, p.id, p.rev);
      }
    };
    const routes: Route[] = LABEL_API_VERSIONS.flatMap((version): Route[] => {
      const api = apiPrefix(version);
      return [
        { method: 'GET', path: `${api}/labels`, handler: checked(version, 'labels.list', (req) => listLabels(req, env)) },
        { method: 'POST', path: `${api}/labels`, handler: checked(version, 'labels.create', (req) => createLabel(req, env)) },
        ...(['GET', 'POST', 'PATCH', 'DELETE'] as const).map((method) => ({ method, path: `${api}/labels/*`, handler: dispatch(version) })),
        { method: 'GET', path: `${api}/limits/label`, handler: checked(version, 'limits.getLabel', (req) => getLimits(req, env)) },
        {
          method: 'GET',
          path: `${api}/users/:user/capabilities`,
          handler: checked(version, 'users.getCapabilities', (req) => getCapabilities(req, pathParam(req, 'user'), env)),
        },
      ];
    });
    routes.push({ method: 'GET', path: DISCOVERY_PATH, handler: getDiscovery });
    routes.push({ method: 'GET', path: WEB_PAGE_PATH, handler: labelWebPage });
    return {
      routes,
      errorReply,
      async authenticate(req, route) {
        // the discovery document is public, as Google's is
        if (route.path === DISCOVERY_PATH || route.path === WEB_PAGE_PATH) return;
        const token = bearerToken(req.headers, req.query);
        const check = await ctx.store.read((s) => checkAccessToken(s, token, ctx.now()));
        if (!check.ok) {
          // RFC 6750 §3.1: no error code when the request carried no credentials at all
          const missing = check.reason === 'missing';
          throw new MockError(
            401,
            'UNAUTHENTICATED',
            missing
              ? 'Request is missing required authentication credential. Expected OAuth 2 access token (Authorization: Bearer …).'
              : `Request had invalid authentication credentials: the access token is ${check.reason}. Sign in again.`,
            {},
            { 'www-authenticate': bearerChallenge(REALM, missing ? {} : { error: 'invalid_token' }) },
          );
        }
        const scopes = check.record.scopes;
        const write = route.method !== 'GET';
        const needed = write ? WRITE_SCOPES : READ_SCOPES;
        if (!scopes.some((s) => needed.includes(s))) {
          // RFC 6750 §3.1 insufficient_scope: 403 with the scope needed; Google's body names the reason too
          throw new MockError(
            403,
            'PERMISSION_DENIED',
            `Request had insufficient authentication scopes: ${write ? 'a change needs' : 'reading needs'} one of ${needed.join(', ')}`,
            { details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'ACCESS_TOKEN_SCOPE_INSUFFICIENT', domain: 'googleapis.com' }] },
            { 'www-authenticate': bearerChallenge(REALM, { error: 'insufficient_scope', scope: needed.join(' ') }) },
          );
        }
        const who: Caller = {
          token: check.record,
          person: `people/${check.record.sub}`,
          email: check.record.email,
          admin: scopes.includes(SCOPES.admin) || scopes.includes(SCOPES.adminReadonly),
          adminWrite: scopes.includes(SCOPES.admin),
          canWrite: scopes.some((s) => WRITE_SCOPES.includes(s)),
        };
        req.auth = who;
      },
    };
  },
};

export default labelsService;
