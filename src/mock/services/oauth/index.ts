import { readFileSync } from 'node:fs';
import type { ServiceModule } from '../../service.js';
import type { MockState } from '../../store.js';
import { authorizeRoutes } from './authorize.js';
import { errorReply, oauthOptions, type OAuthMockOptions } from './common.js';
import { clientProblem, restoreClient, seedClients, seedUsers, type MockUser, type OAuthClient } from './registry.js';
import { tokenRoutes } from './token.js';
import { oauth } from './tokens.js';

/** Reads a registry file (JSON or YAML): `{clients: [...], users: [...]}` or a list of clients. */
export async function readRegistryFile(path: string): Promise<{ clients: OAuthClient[]; users: MockUser[] }> {
  const text = readFileSync(path, 'utf8');
  let doc: unknown;
  if (/\.ya?ml$/i.test(path)) {
    const yaml = (await import('yaml')) as typeof import('yaml') & { default?: typeof import('yaml') };
    doc = (yaml.parse ?? yaml.default!.parse)(text);
  } else doc = JSON.parse(text);
  const obj = (Array.isArray(doc) ? { clients: doc } : (doc ?? {})) as { clients?: OAuthClient[]; users?: MockUser[] };
  const clients = obj.clients ?? [];
  for (const c of clients) {
    const problem = clientProblem(c);
    if (problem) throw new Error(`${path}: ${problem}`);
    if (typeof c.deleted_at === 'string') c.deleted_at = Date.parse(c.deleted_at);
  }
  for (const u of obj.users ?? []) if (!u?.sub || !u?.email) throw new Error(`${path}: every user needs sub and email`);
  return { clients, users: obj.users ?? [] };
}

function merge(state: MockState, clients: OAuthClient[], users: MockUser[]): void {
  const slice = oauth(state);
  for (const c of clients) slice.clients[c.client_id] = c;
  for (const u of users) {
    const i = (slice.users as MockUser[]).findIndex((x) => x.sub === u.sub);
    if (i >= 0) slice.users[i] = u;
    else slice.users.push(u);
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
    if (state.oauth?.clients) return false;
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
    return {
      routes: [...authorizeRoutes(ctx), ...tokenRoutes(ctx)],
      errorReply,
      /** Restores a deleted client (the developer console's "restore", within 30 days). */
      restoreClient: (clientId: string) =>
        ctx.store.write((s) => {
          const c = oauth(s).clients[clientId] as OAuthClient | undefined;
          return c ? restoreClient(c, ctx.now()) : `${clientId} is unknown`;
        }),
    };
  },
};

export default oauthService;
