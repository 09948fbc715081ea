// The embedded mock's adapter: the one file of the CLI that imports src/mock (the embedded profile's
// backend, started in-process on first use). Everything else reaches it through the port.
import type { Context } from '../context.js';
import type { OpsError } from '../core/errors.js';
import type { Transport } from '../core/http.js';
import { checkEmbeddedSignIn as checkSignIn, embeddedLocalError as localError, embeddedMock, embeddedTransport as transport } from '../mock/embedded.js';

/** The embedded mock of every service, started once per command: its base URL. */
export async function embeddedUrl(ctx: Context): Promise<string> {
  return (await embeddedMock(ctx)).url;
}

/** How a command's HTTP client reaches the embedded mock: in this process, without a socket. */
export function embeddedTransport(ctx: Context): Promise<Transport> {
  return transport(ctx);
}

/** The embedded mock's last storage error, shown as it is instead of its 503. */
export function embeddedLocalError(ctx: Context): OpsError | undefined {
  return localError(ctx);
}

/** Before a sign-in: the mock's state directory can be written and its authorization server loads. */
export function checkEmbeddedSignIn(ctx: Context): Promise<void> {
  return checkSignIn(ctx);
}

/** The token the embedded tracker provisions for itself. */
export async function embeddedTrackerToken(ctx: Context): Promise<string> {
  const [server, { stateTrackerToken }] = await Promise.all([embeddedMock(ctx), import('../mock/store.js')]);
  await server.service('tracker');
  return server.store.read(stateTrackerToken);
}
