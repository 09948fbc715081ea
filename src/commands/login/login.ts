import type { Context } from '../../context.js';
import { UsageError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './login.spec.js';
import { showLoginProgress } from './lib/progress.js';
import { configuredIssuer } from '../../config/server-id.js';
import { durationFlag } from '../../core/duration.js';

export type Options = OptionsOf<typeof spec>;

/** `opsctl login`: signs in, stores the tokens, says who you are and what you may do. */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  const [{ login }, { parseScopes, shortScope }] = await Promise.all([import('../../auth/browser-login.js'), import('../../auth/scopes.js')]);
  const timeoutMs = durationFlag('--timeout', opts.timeout, { bare: 's', positive: true });
  let port: number | undefined;
  if (opts.port !== undefined) {
    port = Number(opts.port);
    if (!/^\d+$/.test(opts.port) || port === 0 || port > 65535)
      throw new UsageError(`--port: "${opts.port}" is not a port in 1024..65535`, {
        field: 'port',
        hint: 'give the port your OAuth client registered (1024..65535), or leave --port out for a free port',
      });
    // The redirect listener lives for one sign-in on 127.0.0.1: a port below 1024 needs root (or
    // CAP_NET_BIND_SERVICE), and a browser sign-in whose tokens land in a home directory is no job for root.
    // `mock serve` takes one (a server may be run so); loopback redirects match any port (RFC 8252 §7.3).
    if (port < 1024)
      throw new UsageError(
        `--port: ${port} is a privileged port (below 1024): login's redirect listener opens only for this sign-in, and opsctl does not ask root's rights for it`,
        {
          field: 'port',
          hint: 'leave --port out (a free port: a loopback redirect URI matches any port, RFC 8252 §7.3), or give the port your OAuth client registered, 1024..65535',
        },
      );
  }
  // Short names expand to the Google-shaped scope base; an issuer's (any provider's) scopes stay as written.
  const scopes = opts.scopes ? parseScopes(opts.scopes, { expand: !configuredIssuer(ctx.env, await ctx.profile()) }) : undefined;
  if (opts.scopes && !scopes?.length)
    throw new UsageError('--scopes: give at least one scope', {
      field: 'scopes',
      hint: "e.g. --scopes openid email media.readonly, or leave --scopes out for the profile's scopes",
    });
  if (opts.loginHint !== undefined && !opts.loginHint.trim())
    throw new UsageError('--login-hint: give an e-mail address or account id', {
      field: 'login-hint',
      hint: 'e.g. --login-hint alice@example.com, or leave it out to choose on the sign-in page',
    });
  const ciToken = opts.withOidcToken ?? ctx.env.OPSCTL_OIDC_TOKEN_FILE;
  if (ciToken !== undefined) {
    const other = opts.device ? '--device' : opts.consentAs !== undefined ? '--consent-as' : opts.port !== undefined ? '--port' : undefined;
    if (other)
      throw new UsageError(`--with-oidc-token cannot be combined with ${other}`, {
        field: 'with-oidc-token',
        hint: 'the CI sign-in involves no browser or device: leave the other flag out',
      });
    return (await import('./ci.js')).ciSignIn(ctx, { source: ciToken, scopes, insecureStorage: opts.insecureStorage });
  }
  if (ctx.env.OPSCTL_ACCESS_TOKEN) ctx.io.warn('OPSCTL_ACCESS_TOKEN is set: it will still take precedence over the tokens stored by this sign-in');

  if (opts.device && (opts.consentAs !== undefined || opts.port !== undefined)) {
    throw new UsageError(`--device cannot be combined with ${opts.consentAs !== undefined ? '--consent-as' : '--port'}`, {
      field: 'device',
      hint: 'the device sign-in involves no redirect to this machine: leave the other flag out',
    });
  }
  // a QR code of the address that carries the code, for a phone: only where a person sees it (a terminal, not --json)
  const qr = opts.device && ctx.io.isStderrTTY && !ctx.jsonOutput && ctx.env.TERM !== 'dumb' ? await import('uqr') : undefined;
  const out = opts.device
    ? await (
        await import('../../auth/device.js')
      ).deviceLogin(ctx, { scopes, insecureStorage: opts.insecureStorage, show: (code) => showDeviceCode(ctx, code, qr?.renderUnicodeCompact) })
    : await login(ctx, {
        scopes,
        loginHint: opts.loginHint,
        browser: opts.browser,
        timeoutMs,
        port,
        consentAs: opts.consentAs,
        insecureStorage: opts.insecureStorage,
        progress: showLoginProgress(ctx.io),
      });
  if (out.missing.length) {
    ctx.io.warn(
      `not granted: ${out.missing.map(shortScope).join(', ')}. Commands that need ${out.missing.length === 1 ? 'it' : 'them'} will fail; run opsctl login again to grant ${out.missing.length === 1 ? 'it' : 'them'}.`,
    );
  }
  const expires = out.expiresAt ? new Date(out.expiresAt).toISOString() : 'unknown';
  const lines = [
    `account:   ${out.account ?? 'unknown (request the email scope to see it)'}`,
    `profile:   ${out.profile}`,
    `granted:   ${out.scopes.map(shortScope).join(' ') || '(none)'}`,
    ...(out.missing.length ? [`missing:   ${out.missing.map(shortScope).join(' ')}`] : []),
    `expires:   ${expires} (refreshed automatically)`,
    `stored in: ${out.storedIn}`,
  ];
  return {
    data: {
      account: out.account ?? null,
      profile: out.profile,
      scopes: out.scopes,
      missing_scopes: out.missing,
      access_token_expires_at: out.expiresAt ? new Date(out.expiresAt).toISOString() : null,
      refresh_token_expires_at: out.refreshExpiresAt ? new Date(out.refreshExpiresAt).toISOString() : null,
      stored_in: out.storedIn,
      storage: out.storage,
      auth_server: out.authServer,
    },
    text: lines.join('\n'),
    message: `Signed in${out.account ? ` as ${out.account}` : ''}`,
  };
}

/** The one-time code and where to enter it, on stderr (stdout keeps the result for scripts). */
function showDeviceCode(ctx: Context, code: import('../../auth/device.js').DeviceCode, qr?: (data: string) => string): void {
  const minutes = Math.max(1, Math.round(code.expiresIn / 60));
  ctx.io.err(`! First copy your one-time code: ${code.userCode}`);
  ctx.io.err(`  Then open ${code.verificationUri} in a browser on any device and enter it (the code expires in ${minutes} min).`);
  if (code.verificationUriComplete) {
    ctx.io.err(`  Or open this address, which carries the code: ${code.verificationUriComplete}`);
    // two rows of modules per line; shown only when it fits the terminal (a cut QR code scans as nothing)
    const drawn = qr?.(code.verificationUriComplete);
    const width = drawn ? Math.max(...drawn.split('\n').map((l) => [...l].length)) : 0;
    const columns = ctx.io.columns('stderr');
    if (drawn && columns >= width) ctx.io.err(`  or scan it:\n${drawn}`);
  }
  ctx.io.err(`Waiting for approval (polling every ${code.interval} s; Ctrl-C to stop)…`);
}
