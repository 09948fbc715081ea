import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { examples, lazyAction } from '../action.js';
import { NOUN_SUMMARIES } from '../nouns.js';

export function register(program: Command, ctx: Context): void {
  examples(
    program
      .command('login')
      .description(NOUN_SUMMARIES.login)
      .option('--scopes <scope...>', "scopes to request (short names like media.readonly expand; default: the profile's scopes)")
      .option('--login-hint <email>', 'preselect this account on the sign-in page')
      .option('--no-browser', 'do not open a browser: print the URL, and accept the redirected URL pasted back (remote/SSH)')
      .option('--timeout <duration>', 'how long to wait for the browser, e.g. 90s, 5m', '5m')
      .option('--port <port>', 'loopback port for the redirect listener (default: any free port)')
      .option('--device', 'sign in with a one-time code entered on any device with a browser (RFC 8628 device grant; for SSH sessions and containers)')
      .option('--insecure-storage', 'keep the tokens in the 0600 credential file instead of the OS keyring')
      .option(
        '--consent-as <email>',
        "headless sign-in to a LOCAL MOCK only (embedded or opsctl mock serve on loopback): no browser; opsctl submits the mock's consent form itself as this seeded account (e.g. alice@example.com), granting every requested scope. Refused for any other server",
      )
      .action(
        lazyAction(
          ctx,
          () => import('./login.js'),
          (_a, o) => ({
            scopes: o.scopes,
            loginHint: o.loginHint,
            browser: o.browser !== false,
            timeout: String(o.timeout),
            port: o.port,
            consentAs: o.consentAs,
            insecureStorage: Boolean(o.insecureStorage),
            device: Boolean(o.device),
          }),
        ),
      ),
    'opsctl login                          # adds the account and makes it active (opsctl auth list, auth switch)',
    'opsctl login --scopes media.readonly openid email --login-hint alice@example.com',
    'opsctl login --no-browser            # over SSH: open the URL elsewhere, paste the redirected URL back',
    'opsctl login --profile work --timeout 10m',
    'opsctl login --device                 # no browser here: enter the code it shows on any device with one',
    'opsctl login --consent-as alice@example.com   # no browser at all, local mock only: grants every requested scope as alice',
  );
}
