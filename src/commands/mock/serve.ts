import { join } from 'node:path';
import type { Context } from '../../context.js';
import { UsageError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { parseRate } from '../../core/pacer.js';
import { DEFAULT_CLIENT_ID } from '../../auth/defaults.js';

export interface ServeOptions {
  port: string;
  host: string;
  state?: string;
  memory: boolean;
  test: boolean;
  trackerRateLimit: string;
  trackerMaxGroups?: string;
  trackerMaxObjectives?: string;
  oauthClients?: string;
  accessTokenTtl?: string;
  refreshTokenTtl?: string;
  refreshTokenLimit?: string;
}

function positive(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag}: "${value}" is not a positive whole number`, { field: flag.slice(2) });
  return n;
}

/** Serves the mocks until SIGINT/SIGTERM; prints each service's URL and the tracker token it accepts. */
export async function run(opts: ServeOptions, ctx: Context): Promise<CommandResult> {
  const port = Number(opts.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port: "${opts.port}" is not a port number`, { field: 'port', hint: 'use 0..65535 (0 picks a free port)' });
  const rate = parseRate(opts.trackerRateLimit);
  if (!rate) throw new UsageError(`--tracker-rate-limit: "${opts.trackerRateLimit}" is not valid`, { hint: 'write it as requests/window, e.g. 200/1m' });
  const state = opts.memory ? 'memory' : (opts.state ?? join(ctx.paths.data, 'mock-state.json'));
  const { createMockServer } = await import('../../mock/server.js');
  const oauth = {
    accessTokenTtlSeconds: positive('--access-token-ttl', opts.accessTokenTtl),
    refreshTokenTtlSeconds: positive('--refresh-token-ttl', opts.refreshTokenTtl),
    refreshTokenLimit: positive('--refresh-token-limit', opts.refreshTokenLimit),
    clientsFile: opts.oauthClients,
  };
  if (opts.oauthClients) {
    const { readRegistryFile } = await import('../../mock/services/oauth/index.js');
    await readRegistryFile(opts.oauthClients).catch((err: Error) => {
      throw new UsageError(`--oauth-clients: ${err.message}`, { field: 'oauth-clients', hint: 'give a JSON or YAML file with {clients: [...], users: [...]}' });
    });
  }
  const entitlements = {
    ...(opts.trackerMaxGroups === undefined ? {} : { groups: positive('--tracker-max-groups', opts.trackerMaxGroups) }),
    ...(opts.trackerMaxObjectives === undefined ? {} : { objectives: positive('--tracker-max-objectives', opts.trackerMaxObjectives) }),
  };
  const server = await createMockServer({ port, host: opts.host, state, test: opts.test, options: { tracker: { rateLimit: rate, entitlements }, oauth } });
  if (opts.oauthClients) await server.service('oauth');
  ctx.handlesInterrupt = true;
  await server.service('tracker');
  const token = await server.store.read((s) => s.tracker.token as string);
  const info = {
    url: server.url,
    services: server.urls,
    tracker_token: token,
    oauth_client_id: DEFAULT_CLIENT_ID,
    state: opts.memory ? 'memory' : state,
    test_knobs: opts.test,
    tracker_entitlements: await server.store.read((s) => ({ ...(s.tracker.entitlements as Record<string, number>) })),
  };
  if (ctx.jsonOutput) ctx.io.out(JSON.stringify(info));
  else {
    ctx.io.out(`opsctl mock listening on ${server.url}`);
    for (const [service, url] of Object.entries(server.urls)) ctx.io.out(`  ${service.padEnd(8)} ${url}`);
    ctx.io.out(`  tracker token: ${token}`);
    ctx.io.out(`  state: ${info.state}${opts.test ? '  (test knobs on)' : ''}`);
    ctx.io.out(`  tracker entitlements: ${info.tracker_entitlements.groups} active groups, ${info.tracker_entitlements.objectives} objectives`);
    ctx.io.err(`Use it with: OPSCTL_TRACKER_URL=${server.url} OPSCTL_TRACKER_TOKEN=<token> opsctl tracker labels list. Ctrl-C stops.`);
    ctx.io.err(`Sign in to its OAuth server with: OPSCTL_AUTH_URL=${server.url} OPSCTL_API_URL=${server.url} opsctl login   (client ${DEFAULT_CLIENT_ID})`);
  }
  const signal = ctx.abort.signal;
  await new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await server.close();
  ctx.io.err(`state saved${opts.memory ? ' (memory: discarded)' : ` to ${state}`}; bye`);
  return {};
}
