import type { Dispatcher } from 'undici';
import type { Endpoint, Service } from '../config/services.js';
import type { Context } from '../context.js';
import type { Credentials, HttpClient } from '../core/http.js';
import { loadEmbedded } from './embedded-loader.js';

/**
 * The HTTP client of a service: its endpoint, its credentials and pacing (tracker.ts: token header and
 * rate limit; the OAuth bearer token of auth/access-token.ts), and the command's debug, notice and Ctrl-C
 * wiring. `dispatcher` is the tests' undici MockAgent, if any; the embedded mock has its own transport
 * (embedded.ts: in-process, without a socket).
 */
export async function createServiceClient(ctx: Context, service: Service, dispatcher?: Dispatcher): Promise<HttpClient> {
  const endpoint = await ctx.endpoint(service);
  const [{ HttpClient, closeDefaultDispatcher }, tracker, embedded] = await Promise.all([
    import('../core/http.js'),
    service === 'tracker' ? import('./tracker.js') : undefined,
    endpoint.embedded ? loadEmbedded() : undefined,
  ]);
  if (!dispatcher) ctx.onCleanup(() => closeDefaultDispatcher({ interrupted: ctx.abort.aborted }));
  return new HttpClient({
    service,
    baseUrl: endpoint.url,
    dispatcher,
    transport: embedded && !dispatcher ? await embedded.embeddedTransport(ctx) : undefined,
    pacer: tracker ? await tracker.trackerPacer(ctx, endpoint) : undefined,
    debug: ctx.debugSink,
    interrupt: ctx.abort,
    timeoutMs: Number(ctx.env.OPSCTL_HTTP_TIMEOUT_MS) || undefined,
    notice: (line) => ctx.io.info(ctx.io.colorErr.dim(line)),
    credentials: (req) => serviceCredentials(ctx, service, endpoint, req),
    renewCredentials: service === 'api' || service === 'labels' ? (refused) => renewBearer(ctx, refused) : undefined,
    localError: embedded ? () => embedded.embeddedLocalError(ctx) : undefined,
  });
}

/** A new bearer token after the service refused `refused` as expired: refreshed once, or undefined (nothing to refresh with). */
async function renewBearer(ctx: Context, refused: Credentials): Promise<Credentials | undefined> {
  const token = await (await import('../auth/access-token.js')).renewedAccessToken(ctx, refused.headers?.Authorization?.replace(/^Bearer /, '') ?? '');
  return token ? { headers: { Authorization: `Bearer ${token}` } } : undefined;
}

/** The credentials a request to `service` carries, as the service's room says. Environment tokens beat stored ones (CI). */
async function serviceCredentials(
  ctx: Context,
  service: Service,
  endpoint: Endpoint,
  req: { method: string; path: string },
): Promise<{ headers: Record<string, string> }> {
  if (service === 'tracker') return (await import('./tracker.js')).trackerCredentials(ctx, endpoint);
  if (service === 'api' || service === 'labels') {
    const { accessTokenFor } = await import('../auth/access-token.js');
    return { headers: { Authorization: `Bearer ${await accessTokenFor(ctx, service, req, { force: Boolean(ctx.globals.forceRequest) })}` } };
  }
  return { headers: {} };
}
