import { join } from 'node:path';
import type { Context } from '../context.js';
import type { Endpoint } from '../config/services.js';
import { UsageError } from '../core/errors.js';
import { Pacer, parseRate, type PacerOptions, type RequestPacer } from '../core/pacer.js';
import { trackerToken } from './tracker-token.js';

/**
 * How the tracker's HTTP client paces itself under the service's rate limit (OPSCTL_TRACKER_RATE_LIMIT,
 * the profile's tracker_rate_limit, else 200 requests a minute): shared with every opsctl process of this
 * user for a real server, per process for the embedded mock or with OPSCTL_TRACKER_PACING=process.
 */
export async function trackerPacer(ctx: Context, endpoint: Endpoint): Promise<RequestPacer> {
  const spec = ctx.env.OPSCTL_TRACKER_RATE_LIMIT ?? (await ctx.profile()).tracker_rate_limit ?? '200/1m';
  const rate = parseRate(spec);
  if (!rate) throw new UsageError(`tracker rate limit "${spec}" is not valid`, { hint: 'write it as requests/window, e.g. 200/1m' });
  let lastNotice = 0;
  const opts: PacerOptions = {
    ...rate,
    signal: ctx.abort.signal,
    onWait: (ms: number) => {
      ctx.debug(`[tracker] pacing: waiting ${ms} ms to stay under ${spec}`);
      // Long waits are worth a line on stderr (at most one every 10 s), so a paced run never looks hung.
      if (ms >= 2_000 && ctx.now() - lastNotice >= 10_000) {
        lastNotice = ctx.now();
        ctx.io.info(ctx.io.colorErr.dim(`rate limit: waiting ${Math.ceil(ms / 1000)} s to stay under ${spec} requests`));
      }
    },
  };
  // OPSCTL_TRACKER_PACING=process paces this process alone (no file, no lock). The embedded mock is
  // a server per process with its own counter, so there is nothing to share with other processes.
  const shared = ctx.env.OPSCTL_TRACKER_PACING !== 'process' && !endpoint.embedded;
  return (shared ? await sharedPacer(ctx, endpoint, opts) : undefined) ?? new Pacer(opts);
}

/**
 * The pacing every opsctl process of this user shares for one tracker origin and token: a small file
 * under the data directory, changed under a lock. When that file cannot be used (no permission, a
 * read-only home), this process paces alone and says so once.
 */
async function sharedPacer(ctx: Context, endpoint: Endpoint, opts: PacerOptions): Promise<RequestPacer | undefined> {
  const { SharedPacer } = await import('../core/shared-pacer.js');
  const token = await trackerToken(ctx, endpoint).catch(() => '');
  // (node:crypto only here: the embedded mock's commands never load it)
  const { createHash } = process.getBuiltinModule('node:crypto');
  const key = createHash('sha256')
    .update(`${new URL(endpoint.url).origin}\n${token}`)
    .digest('hex')
    .slice(0, 24);
  const file = join(ctx.paths.data, 'pacing', `tracker-${key}.json`);
  const pacer = new SharedPacer(file, opts);
  try {
    await pacer.init();
  } catch (err) {
    ctx.io.warn(
      `cannot share tracker pacing with other opsctl processes through ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); pacing this process alone. Fix the directory's permissions or set OPSCTL_CONFIG_DIR.`,
    );
    return undefined;
  }
  ctx.onCleanup(() => pacer.flush());
  return pacer;
}
