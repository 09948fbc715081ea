import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { EmbeddedMock } from '@opsctl/mock';
import { ensurePrivateDir } from '../config/paths.js';
import type { Context } from '../context.js';
import type { OpsError } from '../core/errors.js';
import type { Transport } from '../core/http.js';

/**
 * The embedded profile's mock, as the CLI sees it: the one adapter @opsctl/mock hands out (url, transport,
 * its own tracker token, a sign-in check, its storage error), started once per command (Context).
 * This file and src/commands/mock/ are the only parts of src/ that import the mock package
 * (test/unit/mock-package.test.ts keeps it so).
 */
const started = new WeakMap<Context, Promise<EmbeddedMock>>();
const ready = new WeakMap<Context, EmbeddedMock>();

/** The in-process mock of every service, with its state in opsctl's data directory. Started once per command. */
export function embeddedMock(ctx: Context): Promise<EmbeddedMock> {
  let mock = started.get(ctx);
  if (!mock) {
    mock = start(ctx);
    started.set(ctx, mock);
  }
  return mock;
}

/** The embedded mock of every service, started once per command: its base URL (virtual until it listens: see EmbeddedMock.url). */
export async function embeddedUrl(ctx: Context): Promise<string> {
  return (await embeddedMock(ctx)).url;
}

/** How a command's HTTP client reaches the embedded mock: in this process, without a socket (see EmbeddedMock.transport). */
export async function embeddedTransport(ctx: Context): Promise<Transport> {
  const [mock, { viaNetwork }] = await Promise.all([embeddedMock(ctx), import('../core/http.js')]);
  return mock.transport(viaNetwork());
}

/** The embedded mock's last storage error (its state file, directory or lock), shown as it is rather than as an HTTP error. */
export function embeddedLocalError(ctx: Context): OpsError | undefined {
  return ready.get(ctx)?.localError();
}

/** The embedded tracker's own token. */
export async function embeddedTrackerToken(ctx: Context): Promise<string> {
  return (await embeddedMock(ctx)).trackerToken();
}

function statePathOf(ctx: Context): string {
  return ctx.env.OPSCTL_MOCK_STATE ?? join(ctx.paths.data, 'mock-state.json');
}

/**
 * For a sign-in against the embedded mock: its state directory can be written and its authorization
 * server loads (its clients file, OPSCTL_MOCK_OAUTH_CLIENTS, is read and checked), else the error naming
 * the path and the fix comes now, before any page or browser step. Then the mock listens on a loopback
 * socket: a sign-in hands its pages to a browser (or a person, with a device code), so the endpoint a sign-in
 * resolves after this is that socket's, not the virtual origin the in-process answers use.
 */
export async function checkEmbeddedSignIn(ctx: Context): Promise<void> {
  const { writableDir } = await import('../config/writable.js');
  await writableDir(dirname(statePathOf(ctx)));
  const mock = await embeddedMock(ctx);
  await mock.checkSignIn();
  await mock.listen();
}

/** OPSCTL_MOCK_TRUST_JWKS: the key set the embedded mock trusts for keyless CI sign-in (token exchange). */
async function embeddedTrust(file: string): Promise<{ keys: unknown[] }> {
  const [{ readTrustJwks }, { UsageError }] = await Promise.all([import('@opsctl/mock'), import('../core/errors.js')]);
  return readTrustJwks(file).catch((err: Error) => {
    throw new UsageError(`OPSCTL_MOCK_TRUST_JWKS: ${err.message}`, {
      field: 'OPSCTL_MOCK_TRUST_JWKS',
      hint: "point it at the CI provider's key set saved as JSON",
    });
  });
}

async function start(ctx: Context): Promise<EmbeddedMock> {
  const statePath = statePathOf(ctx);
  const { createEmbeddedMock } = await import('@opsctl/mock');
  const mock = await createEmbeddedMock({
    statePath,
    clientsFile: ctx.env.OPSCTL_MOCK_OAUTH_CLIENTS,
    trustJwks: ctx.env.OPSCTL_MOCK_TRUST_JWKS ? await embeddedTrust(ctx.env.OPSCTL_MOCK_TRUST_JWKS) : undefined,
    signal: ctx.abort.signal,
    notice: (text) => ctx.io.info(`${ctx.io.colorErr.yellow('!')} ${text}`),
  });
  ready.set(ctx, mock);
  ctx.onCleanup(() => mock.close());
  await noticeOnce(ctx, statePath);
  return mock;
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
  // (node:fs/promises loads here, on the first use only: a read never loads it, about 3 ms of CPU with its 8 modules)
  const { writeFile } = await import('node:fs/promises');
  await writeFile(marker, `${new Date(ctx.now()).toISOString()}\n`, { mode: 0o600 }).catch(() => undefined);
}
