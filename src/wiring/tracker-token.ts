import type { Context } from '../context.js';
import type { Endpoint } from '../config/services.js';
import { AuthError, isOpsError, type OpsError, UsageError } from '../core/errors.js';
import { TRACKER_TOKEN_HEADERS, trackerTokenHeader as headerFor } from '../tracker/token-header.js';
import { loadEmbedded } from './embedded-loader.js';

/** The header and token every tracker request carries. */
export async function trackerCredentials(ctx: Context, endpoint: Endpoint): Promise<{ headers: Record<string, string> }> {
  return { headers: { [await trackerTokenHeader(ctx, endpoint)]: await trackerToken(ctx, endpoint) } };
}

/** `Shortcut-Token` for the real service, `Tracker-Token` elsewhere, unless the profile or environment names one. */
export async function trackerTokenHeader(ctx: Context, endpoint: Endpoint): Promise<string> {
  const fromEnv = ctx.env.OPSCTL_TRACKER_TOKEN_HEADER;
  if (fromEnv && !TRACKER_TOKEN_HEADERS.some((h) => h.toLowerCase() === fromEnv.trim().toLowerCase())) {
    throw new UsageError(`OPSCTL_TRACKER_TOKEN_HEADER: "${fromEnv}" is not a tracker token header`, {
      hint: `use one of ${TRACKER_TOKEN_HEADERS.join(', ')}, or unset it to pick by host`,
    });
  }
  return headerFor(endpoint.url, fromEnv || (await ctx.profile()).tracker_token_header);
}

/**
 * The tracker token: OPSCTL_TRACKER_TOKEN (CI), else the profile's stored one, else (embedded mock only)
 * the token the embedded tracker provisions for itself.
 */
export async function trackerToken(ctx: Context, endpoint?: Endpoint): Promise<string> {
  if (ctx.env.OPSCTL_TRACKER_TOKEN) return ctx.env.OPSCTL_TRACKER_TOKEN;
  let stored: string | undefined;
  let unreadable: OpsError | undefined;
  try {
    stored = (await (await ctx.credentials()).get(await ctx.profileName())).tracker?.token;
  } catch (err) {
    if (!isOpsError(err) || err.code !== 'credentials_file') throw err;
    unreadable = err;
  }
  if (stored) return stored;
  const ep = endpoint ?? (await ctx.endpoint('tracker'));
  if (unreadable && !ep.embedded) throw unreadable;
  if (ep.embedded) {
    // The embedded tracker provisions its own token: a broken credential file does not stop it.
    if (unreadable) ctx.io.warn(`${unreadable.message}; using the embedded tracker's own token`);
    return (await loadEmbedded()).embeddedTrackerToken(ctx);
  }
  await (await import('../config/profile-check.js')).assertProfileExists(ctx, await ctx.profileName());
  throw new AuthError('no tracker token', {
    hint: 'run: opsctl auth store-token --service tracker --with-token < token.txt   (or set OPSCTL_TRACKER_TOKEN)',
  });
}
