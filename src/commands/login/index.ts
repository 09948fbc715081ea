import { Option, type Command } from 'commander';
import type { Context } from '../../context.js';
import { examples, lazyAction } from '../action.js';
import { NOUN_SUMMARIES } from '../nouns.js';

export function register(program: Command, ctx: Context): void {
  examples(
    program
      .command('login')
      .description(NOUN_SUMMARIES.login)
      .option('--scopes <scope...>', 'scopes to request (short names like media.readonly expand; default: the profile\'s scopes)')
      .option('--login-hint <email>', 'preselect this account on the sign-in page')
      .option('--no-browser', 'do not open a browser: print the URL, and accept the redirected URL pasted back (remote/SSH)')
      .option('--timeout <duration>', 'how long to wait for the browser, e.g. 90s, 5m', '5m')
      .option('--port <port>', 'loopback port for the redirect listener (default: any free port)')
      .addOption(new Option('--consent-as <email>', 'demo/tests only, local mock only: submit the consent form over HTTP as this account').hideHelp())
      .action(
        lazyAction(ctx, () => import('./login.js'), (_a, o) => ({
          scopes: o.scopes as string[] | undefined,
          loginHint: o.loginHint as string | undefined,
          browser: o.browser !== false,
          timeout: String(o.timeout),
          port: o.port as string | undefined,
          consentAs: o.consentAs as string | undefined,
        })),
      ),
    'opsctl login',
    'opsctl login --scopes media.readonly openid email --login-hint alice@example.com',
    'opsctl login --no-browser            # over SSH: open the URL elsewhere, paste the redirected URL back',
    'opsctl login --profile work --timeout 10m',
  );
}
