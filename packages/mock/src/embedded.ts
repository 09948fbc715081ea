import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ensurePrivateDir } from '../config/paths.js';
import type { Context } from '../context.js';
import type { OpsError } from '../core/errors.js';
import type { Transport } from '../core/http.js';
import type { MockServer } from './server.js';

/** One embedded mock per command (Context): started on first use. */
const started = new WeakMap<Context, Promise<MockServer>>();
/** The last error of an embedded mock's own storage, per command: shown to the user as it is. */
const localErrors = new WeakMap<Context, OpsError>();

/**
 * The embedded mock's last storage error (its state file, directory or lock), which it answered as a
 * 503: the command shows this, with its path and fix, rather than an HTTP error.
 */
export function embeddedLocalError(ctx: Context): OpsError | undefined {
  return localErrors.get(ctx);
}

/** The in-process mock of every service, with its state in opsctl's data directory. Started once per command. */
export function embeddedMock(ctx: Context): Promise<MockServer> {
  let server = started.get(ctx);
  if (!server) {
    server = start(ctx);
    started.set(ctx, server);
  }
  return server;
}

/**
 * How a command's HTTP client reaches the embedded mock: in this process, without a socket, HTTP parser
 * or undici (mock/in-process.ts); a multipart upload, or a URL of another origin, goes over the network.
 */
export async function embeddedTransport(ctx: Context): Promise<Transport> {
  const [mock, { viaNetwork }] = await Promise.all([embeddedMock(ctx), import('../core/http.js')]);
  const origin = new URL(mock.url).origin;
  const network = viaNetwork();
  // a string body or none is answered here; a FormData (an object) streams over the socket
  return (url, req) => (url.origin === origin && typeof req.body !== 'object' ? mock.answer(url, req) : network(url, req));
}

function statePathOf(ctx: Context): string {
  return ctx.env.OPSCTL_MOCK_STATE ?? join(ctx.paths.data, 'mock-state.json');
}

/**
 * For a sign-in against the embedded mock: its state directory can be written and its authorization
 * server loads (its clients file, OPSCTL_MOCK_OAUTH_CLIENTS, is read and checked), else the error naming
 * the path and the fix comes now, before any page or browser step.
 */
export async function checkEmbeddedSignIn(ctx: Context): Promise<void> {
  const { writableDir } = await import('../config/writable.js');
  await writableDir(dirname(statePathOf(ctx)));
  await (await embeddedMock(ctx)).service('oauth');
}

async function start(ctx: Context): Promise<MockServer> {
  const statePath = statePathOf(ctx);
  const clientsFile = ctx.env.OPSCTL_MOCK_OAUTH_CLIENTS;
  const { createMockServer } = await import('./server.js');
  const server = await createMockServer({
    state: statePath,
    port: 0,
    host: '127.0.0.1',
    onLocalError: (err) => localErrors.set(ctx, err),
    lock: { signal: ctx.abort.signal, notice: (text) => ctx.io.info(`${ctx.io.colorErr.yellow('!')} ${text}`) },
    // A per-command mock makes a trigger's first delivery attempt but runs no background retries
    // (those belong to `mock serve`, or to `opsctl mock events deliver`).
    options: { oauth: { ...(clientsFile ? { clientsFile } : {}), events: { background: false } } },
  });
  ctx.onCleanup(() => server.close());
  // A state file of the wrong shape is refused here, once, before any request meets it.
  await server.store.read(() => undefined);
  await noticeOnce(ctx, statePath);
  return server;
}

/** The first use (and every use with --debug) says on stderr that the embedded mock answers, and how to change that. */
async function noticeOnce(ctx: Context, statePath: string): Promise<void> {
  const marker = join(ctx.paths.data, '.embedded-notice');
  if (existsSync(marker) && !ctx.debugEnabled) return;
  ctx.io.info(
    ctx.io.colorErr.dim(
      `Using the embedded mock services (state: ${statePath}). To use a real service: opsctl config set <service> URL --profile NAME, or set OPSCTL_<SERVICE>_URL.`,
    ),
  );
  await ensurePrivateDir(ctx.paths.data);
  await writeFile(marker, `${new Date(ctx.now()).toISOString()}\n`, { mode: 0o600 }).catch(() => undefined);
}
