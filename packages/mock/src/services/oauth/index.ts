import { UsageError } from '@opsctl/shared/errors.js';
import { readLocalFileSync } from '@opsctl/shared/local-file.js';
import { readYamlFile } from '@opsctl/shared/yaml.js';
import type { ServiceModule } from '../../service.js';
import type { MockState } from '../../store.js';
import { authorizeRoutes } from './authorize.js';
import { errorReply, oauthOptions, type OAuthMockOptions } from './common.js';
import { clientProblem, restoreClient, seedClients, seedUsers, type MockUser, type OAuthClient } from './registry.js';
import { tokenRoutes } from './token.js';
import { deviceRoutes } from './device.js';
import { oauth, storedField } from './tokens.js';
import { MockError } from '../../http.js';
import { emptyDict, own } from '@opsctl/shared/lookup.js';
import { lazyConsole } from './admin-lazy.js';
import { afterRestore, hasPendingEvents } from './console-core.js';

/** POST here restores a deleted client within 30 days (what the developer console's restore button does). */
export const RESTORE_PATH = '/oauth2/mock/clients/:client_id/restore';

/** Reads a registry file (JSON or YAML): `{clients: [...], users: [...]}` or a list of clients. */
export async function readRegistryFile(path: string): Promise<{ clients: OAuthClient[]; users: MockUser[] }> {
  // A file the user named (OPSCTL_MOCK_OAUTH_CLIENTS, mock serve --clients): its problems are theirs to fix, exit 2.
  const fix = 'fix it (see docs/mock.md for its shape), or unset OPSCTL_MOCK_OAUTH_CLIENTS';
  const refuse = (problem: string) => new UsageError(`the clients file ${path} ${problem}`, { code: 'clients_file', hint: fix });
  let doc: unknown;
  if (/\.ya?ml$/i.test(path)) doc = await readYamlFile(path, { what: 'the clients file', exitCode: 2, fix });
  else {
    const text = readLocalFileSync(path, { what: 'the clients file', exitCode: 2 });
    try {
      doc = JSON.parse(text);
    } catch (err) {
      throw refuse(`is not valid JSON (${(err as Error).message.split('\n')[0]})`);
    }
  }
  if (doc !== null && doc !== undefined && typeof doc !== 'object') throw refuse('is not a list of clients or an object {clients, users}');
  const obj = (Array.isArray(doc) ? { clients: doc } : (doc ?? {})) as { clients?: OAuthClient[]; users?: MockUser[] };
  const clients = obj.clients ?? [];
  if (!Array.isArray(clients)) throw refuse('has "clients" that is not a list');
  if (!Array.isArray(obj.users ?? [])) throw refuse('has "users" that is not a list');
  for (const c of clients) {
    const problem = clientProblem(c);
    if (problem) throw refuse(`has a bad client: ${problem}`);
    if (typeof c.deleted_at === 'string') c.deleted_at = Date.parse(c.deleted_at);
  }
  for (const u of obj.users ?? []) if (!u?.sub || !u?.email) throw refuse('has a user without sub and email (every user needs both)');
  return { clients, users: obj.users ?? [] };
}

function merge(state: MockState, clients: OAuthClient[], users: MockUser[]): void {
  const slice = oauth(state);
  const registry = (slice.clients ??= emptyDict());
  const known = (slice.users ??= []);
  for (const c of clients) registry[c.client_id] = c;
  for (const u of users) {
    const i = known.findIndex((x) => x.sub === u.sub);
    if (i >= 0) known[i] = u;
    else known.push(u);
  }
}

/**
 * The mock authorization server (seed 000): the authorization endpoint with a sign-in and consent
 * page, the token endpoint (code exchange with PKCE, refresh), revocation, tokeninfo, OIDC discovery.
 * It serves plain HTTP on loopback, where the real endpoint is TLS-only.
 */
const oauthService: ServiceModule = {
  name: 'oauth',
  initState(state, options) {
    if (storedField(state, 'clients')) return false;
    const slice = oauth(state);
    const opts = (options.oauth ?? {}) as OAuthMockOptions;
    slice.clients = {};
    slice.users = [];
    slice.pending = {};
    merge(state, opts.clients ?? seedClients(Date.now()), opts.users ?? seedUsers());
    return true;
  },
  async create(ctx) {
    const opts = oauthOptions(ctx);
    if (opts.clientsFile) {
      const file = await readRegistryFile(opts.clientsFile);
      await ctx.store.write((s) => merge(s, file.clients, file.users));
    }
    const restore = (clientId: string) =>
      ctx.store.write((s) => {
        const c = own(oauth(s).clients, clientId);
        const problem = c ? restoreClient(c, ctx.now()) : `${clientId} is unknown`;
        if (c && !problem) afterRestore(c, ctx.now());
        return problem;
      });
    // The developer console's API (routes registered on first need) and the security-event delivery
    // loop, loaded on first use; the loop starts now only to resume what the state still queues.
    const admin = lazyConsole(ctx);
    if (await ctx.store.read(hasPendingEvents)) await admin.kick();
    return {
      routes: [
        ...authorizeRoutes(ctx),
        ...tokenRoutes(ctx, admin),
        ...deviceRoutes(ctx),
        {
          // The developer console's "restore" of a deleted client (not part of the OAuth API; within 30 days).
          method: 'POST',
          path: RESTORE_PATH,
          handler: async (req) => {
            const clientId = req.params.client_id ?? '';
            const problem = await restore(clientId);
            if (!problem) return { status: 200, json: { client_id: clientId, restored: true } };
            if (problem.endsWith('is unknown')) throw new MockError(404, 'not_found', `The OAuth client ${clientId} does not exist.`);
            if (problem.endsWith('is not deleted'))
              throw new MockError(400, 'invalid_request', `The OAuth client ${clientId} is not deleted: nothing to restore.`);
            throw new MockError(400, 'deleted_client', `The OAuth client ${clientId} was deleted more than 30 days ago and can no longer be restored.`);
          },
        },
      ],
      moreRoutes: async () => (await admin.load()).routes,
      errorReply,
      /** Restores a deleted client (the developer console's "restore", within 30 days). */
      restoreClient: restore,
      /** Stops the event delivery loop (the server calls it on close). */
      close: () => admin.close(),
    };
  },
};

export default oauthService;
