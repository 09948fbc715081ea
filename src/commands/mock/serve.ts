import { isIP } from 'node:net';
import { join } from 'node:path';
import type { Context } from '../../context.js';
import { OpsError, UsageError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { parseRate } from '../../core/pacer.js';
import { isLoopbackHost } from '../../core/redact.js';
import { DEFAULT_CLIENT_ID } from '../../auth/defaults.js';
import { sliceField, stateTrackerToken, type MockServer, type MockServiceOptions, type SalvageReport } from '@opsctl/mock';
import type { OptionsOf } from '../spec.js';
import type { spec } from './serve.spec.js';
import { durationFlag } from '../../core/duration.js';

const HOSTNAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** Why the server could not listen, naming the address and what to do (else the error itself). */
function listenError(err: unknown, host: string, port: number): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  if (code === 'EADDRINUSE')
    return new OpsError(`cannot listen on ${where}: the port ${port} is already in use`, 1, {
      code: 'port_in_use',
      hint: 'stop what uses it, choose another --port, or use --port 0 for any free port',
    });
  if (code === 'EADDRNOTAVAIL')
    return new OpsError(`cannot listen on ${where}: ${host} is not an address of this machine`, 1, {
      code: 'address_not_available',
      hint: 'use one of its addresses, 127.0.0.1 (this machine only) or 0.0.0.0 (every interface)',
    });
  if (code === 'EACCES' || code === 'EPERM')
    return new OpsError(
      `cannot listen on ${where}: permission denied${port > 0 && port < 1024 ? `: port ${port} is privileged (below 1024), and this user may not bind one` : ''}`,
      1,
      {
        code: 'listen_denied',
        hint:
          port > 0 && port < 1024
            ? 'choose --port 1024 or higher (or 0 for any free port); a privileged port needs root or the CAP_NET_BIND_SERVICE capability (setcap cap_net_bind_service=+ep on node)'
            : 'check what may bind that address (a firewall or security policy), or choose another --port',
      },
    );
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return new OpsError(`cannot listen on ${where}: the host name ${host} does not resolve`, 1, {
      code: 'host_not_found',
      hint: 'give an IP address with --host, e.g. 127.0.0.1',
    });
  return err;
}

function positive(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag}: "${value}" is not a positive whole number`, { field: flag.slice(2) });
  return n;
}

function nonNegative(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`${flag}: "${value}" is not a whole number of seconds (0 or more)`, { field: flag.slice(2) });
  return n;
}

async function trustJwks(file: string): Promise<{ keys: unknown[] }> {
  const { readTrustJwks } = await import('@opsctl/mock');
  return readTrustJwks(file).catch((err: Error) => {
    throw new UsageError(`--trust-jwks: ${err.message}`, {
      field: 'trust-jwks',
      hint: "save the CI provider's jwks_uri document, e.g. curl -o ci-jwks.json https://token.actions.githubusercontent.com/.well-known/jwks",
    });
  });
}

/** A duration flag (90s, 2m, 1h; a bare number is seconds) in seconds. */
function seconds(flag: string, value: string): number {
  return durationFlag(flag, value, { bare: 's' }) / 1000;
}

/**
 * What a listener off loopback would open to the network with no authentication: the developer
 * console's admin API always, the test knobs with --test. (The mocked services themselves check their
 * tokens like the real ones.)
 */
export function exposedAdmin({ test }: { test: boolean }): string {
  const console = 'the developer-console API /oauth2/mock/… (create, change and delete OAuth clients, mint integrity tokens, trigger security events)';
  return test ? `${console} and the --test knobs /__mock/… (forced failures, the request log with its tokens, the mock's clock)` : console;
}

/** Serves the mocks until SIGINT/SIGTERM; prints each service's URL and the tracker token it accepts. */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  const { port, offLoopback } = checkAddress(opts);
  const options = await serviceOptions(opts);
  const state = opts.memory ? 'memory' : (opts.state ?? join(ctx.paths.data, 'mock-state.json'));
  const { server, token, salvaged } = await start(opts, port, state, options);
  if (salvaged) reportSalvage(ctx, salvaged);
  ctx.handlesInterrupt = true;
  const info = {
    url: server.url,
    services: server.urls,
    tracker_token: token,
    oauth_client_id: DEFAULT_CLIENT_ID,
    state: opts.memory ? 'memory' : state,
    test_knobs: opts.test,
    tracker_entitlements: await server.store.read((s) => ({ ...(sliceField(s, 'tracker', 'entitlements') as Record<string, number> | undefined) })),
  };
  if (offLoopback)
    ctx.io.warn(
      `listening on ${opts.host} (--expose-admin): anyone who can reach ${server.url} can use ${exposedAdmin({ test: opts.test })}, with no authentication`,
    );
  if (ctx.jsonOutput) ctx.io.out(JSON.stringify(info));
  else printInfo(ctx, info, { test: opts.test });
  await untilAborted(ctx.abort.signal);
  await server.close();
  ctx.io.err(`state saved${opts.memory ? ' (memory: discarded)' : ` to ${state}`}; bye`);
  return {};
}

/** --port and --host checked; a host off loopback only with --expose-admin. */
function checkAddress(opts: OptionsOf<typeof spec>): { port: number; offLoopback: boolean } {
  const port = /^\d+$/.test(opts.port) ? Number(opts.port) : NaN;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`--port: "${opts.port}" is not a port number`, { field: 'port', hint: 'use 0..65535 (0 picks a free port)' });
  if (!isIP(opts.host) && !HOSTNAME.test(opts.host)) {
    throw new UsageError(`--host: "${opts.host}" is not an IP address or host name`, {
      field: 'host',
      hint: 'e.g. --host 127.0.0.1 (this machine only), --host ::1, or --host 0.0.0.0 (every interface)',
    });
  }
  const offLoopback = !isLoopbackHost(opts.host);
  if (offLoopback && !opts.exposeAdmin) {
    throw new UsageError(
      `--host ${opts.host} would open ${exposedAdmin({ test: opts.test })} to every machine that can reach this one, with no authentication`,
      {
        field: 'host',
        hint: 'keep the default --host 127.0.0.1 (reach it from elsewhere with ssh -L), or add --expose-admin on a network you trust',
      },
    );
  }
  return { port, offLoopback };
}

/** The services' options from the flags, each checked (and the --oauth-clients file read) before anything listens. */
async function serviceOptions(opts: OptionsOf<typeof spec>): Promise<MockServiceOptions> {
  const rate = parseRate(opts.trackerRateLimit);
  if (!rate) throw new UsageError(`--tracker-rate-limit: "${opts.trackerRateLimit}" is not valid`, { hint: 'write it as requests/window, e.g. 200/1m' });
  const { parseSize } = await import('@opsctl/shared/size.js');
  const maxUploadBytes = parseSize(opts.maxUpload);
  if (!maxUploadBytes)
    throw new UsageError(`--max-upload: "${opts.maxUpload}" is not a size`, { field: 'max-upload', hint: 'write it like 200MB, 512KB or a number of bytes' });
  const oauth = {
    accessTokenTtlSeconds: positive('--access-token-ttl', opts.accessTokenTtl),
    refreshTokenTtlSeconds: positive('--refresh-token-ttl', opts.refreshTokenTtl),
    refreshTokenLimit: positive('--refresh-token-limit', opts.refreshTokenLimit),
    clientsFile: opts.oauthClients,
    integrityDelaySeconds: nonNegative('--integrity-delay', opts.integrityDelay),
    ownershipDelaySeconds: seconds('--ownership-delay', opts.ownershipDelay),
    ...(opts.trustJwks ? { trustJwks: await trustJwks(opts.trustJwks), ciAudience: opts.ciAudience } : {}),
    unusedClientDays: positive('--unused-client-days', opts.unusedClientDays),
    deviceIntervalSeconds: positive('--device-interval', opts.deviceInterval),
    deviceSlowDown: nonNegative('--device-slow-down', opts.deviceSlowDown),
  };
  if (opts.oauthClients) {
    const { readClientsFile } = await import('@opsctl/mock');
    await readClientsFile(opts.oauthClients).catch((err: Error) => {
      throw new UsageError(`--oauth-clients: ${err.message}`, { field: 'oauth-clients', hint: 'give a JSON or YAML file with {clients: [...], users: [...]}' });
    });
  }
  const entitlements = {
    ...(opts.trackerMaxGroups === undefined ? {} : { groups: positive('--tracker-max-groups', opts.trackerMaxGroups) }),
    ...(opts.trackerMaxObjectives === undefined ? {} : { objectives: positive('--tracker-max-objectives', opts.trackerMaxObjectives) }),
  };
  return { tracker: { rateLimit: rate, maxUploadBytes, entitlements, strict: Boolean(opts.trackerStrict) }, oauth };
}

/** Checks the state, listens, and loads the services that work in the background; the tracker token it accepts. */
async function start(
  opts: OptionsOf<typeof spec>,
  port: number,
  state: string,
  options: MockServiceOptions,
): Promise<{ server: MockServer; token: string; salvaged?: SalvageReport }> {
  const { createMockServer, FileStore, MemoryStore } = await import('@opsctl/mock');
  // The state file is checked before listening: a wrong shape is refused naming the file, never served as 500s.
  // the journal: each write appended and fdatasync'ed before it is answered, O(1) in the state's size (docs/mock.md)
  const file = opts.memory ? undefined : new FileStore(state, undefined, undefined, { journal: true });
  const salvaged = file && opts.salvageJournal ? await file.salvageJournal() : undefined;
  const store = file ?? new MemoryStore();
  await store.read(() => undefined);
  const server = await createMockServer({ port, host: opts.host, state: store, test: opts.test, options }).catch((err) => {
    throw listenError(err, opts.host, port);
  });
  try {
    // Loaded at once: security events still queued in the state are delivered in the background.
    await server.service('oauth');
    await server.service('tracker');
    return { server, token: await server.store.read(stateTrackerToken), salvaged };
  } catch (err) {
    await server.close();
    throw err;
  }
}

/** What --salvage-journal kept and set aside, on stderr: nothing of the journal is dropped unsaid. */
function reportSalvage(ctx: Context, r: SalvageReport): void {
  if (r.lines === 0 && !r.torn) return void ctx.io.info(`--salvage-journal: ${r.journal} holds no writes to salvage; nothing changed`);
  const kept = `${r.applied} of the journal's ${r.lines} write${r.lines === 1 ? '' : 's'} kept in the state`;
  if (r.refused.length === 0) ctx.io.success(`--salvage-journal: ${kept} (every line applied)`);
  else {
    ctx.io.warn(
      `--salvage-journal: ${kept}; ${r.refused.length} could not be applied and ${r.refused.length === 1 ? 'is' : 'are'} set aside in ${r.rejectedPath}:`,
    );
    for (const x of r.refused) ctx.io.err(`  line ${x.line}: ${ctx.io.safeErr(x.problem)}`);
  }
  if (r.keptAs) ctx.io.info(`  the journal as it was: ${r.keptAs}`);
  if (r.torn) ctx.io.info('  its last line was incomplete (a write never answered): left out');
}

function printInfo(
  ctx: Context,
  info: { url: string; services: Record<string, string>; tracker_token: string; state: string; tracker_entitlements: Record<string, number> },
  { test }: { test: boolean },
): void {
  ctx.io.out(`opsctl mock listening on ${info.url}`);
  for (const [service, url] of Object.entries(info.services)) ctx.io.out(`  ${service.padEnd(8)} ${url}`);
  ctx.io.out(`  tracker token: ${info.tracker_token}`);
  ctx.io.out(`  state: ${info.state}${test ? '  (test knobs on)' : ''}`);
  ctx.io.out(`  tracker entitlements: ${info.tracker_entitlements.groups} active groups, ${info.tracker_entitlements.objectives} objectives`);
  ctx.io.err(`Use it with: OPSCTL_TRACKER_URL=${info.url} OPSCTL_TRACKER_TOKEN=<token> opsctl tracker labels list. Ctrl-C stops.`);
  ctx.io.err(`Sign in to its OAuth server with: OPSCTL_AUTH_URL=${info.url} OPSCTL_API_URL=${info.url} opsctl login   (client ${DEFAULT_CLIENT_ID})`);
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
}
