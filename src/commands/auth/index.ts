import { Option, type Command } from 'commander';
import type { Context } from '../../context.js';
import { examples, lazyAction } from '../action.js';
import { NOUN_SUMMARIES } from '../nouns.js';

export function register(program: Command, ctx: Context): void {
  const auth = program.command('auth').description(NOUN_SUMMARIES.auth);
  examples(
    auth
      .command('login')
      .description(
        'store a credential for a service, read from stdin with --with-token: the tracker token, or (--service oauth) an OAuth account as JSON {refresh_token, client_id, issuer}',
      )
      .addOption(new Option('--service <service>', 'the service the token is for').choices(['tracker', 'oauth']).default('tracker'))
      .option('--with-token', 'read the token from standard input')
      .option('--insecure-storage', '--service oauth: keep the account in the 0600 credential file (needed where there is no OS keyring, e.g. CI)')
      .action(
        lazyAction(
          ctx,
          () => import('./login.js'),
          (_args, o) => ({ service: o.service, withToken: Boolean(o.withToken), insecureStorage: Boolean(o.insecureStorage) }),
        ),
      ),
    'opsctl auth login --service tracker --with-token < token.txt',
    'echo "$TRACKER_TOKEN" | opsctl auth login --service tracker --with-token --profile work',
    'echo \'{"refresh_token":"…","client_id":"…","issuer":"https://…"}\' | opsctl auth login --service oauth --with-token',
  );
  examples(
    auth
      .command('logout')
      .description('forget a stored service credential (the tracker token of auth login --with-token); OAuth accounts sign out with opsctl logout')
      .addOption(new Option('--service <service>', 'the service whose credential to forget').choices(['tracker']).makeOptionMandatory())
      .option('--all', "every profile's stored token, not only this profile's")
      .action(
        lazyAction(
          ctx,
          () => import('./logout.js'),
          (_args, o) => ({ service: o.service, all: Boolean(o.all) }),
        ),
      ),
    'opsctl auth logout --service tracker',
    'opsctl auth logout --service tracker --profile work',
    'opsctl auth logout --service tracker --all',
  );
  examples(
    auth
      .command('status')
      .description(
        'show the active account, its issuer, granted and missing scopes, token expiry and where the token is stored (exit 4 if not signed in, or signed in at another issuer)',
      )
      .option('--all', 'every account of every profile, from the credential file (exit 4 if an active one needs a new sign-in)')
      .action(
        lazyAction(
          ctx,
          () => import('./status.js'),
          (_a, o) => ({ all: Boolean(o.all) }),
        ),
      ),
    'opsctl auth status',
    'opsctl auth status --json',
    'opsctl auth status --all',
  );
  examples(
    auth
      .command('list')
      .alias('ls')
      .description('list the accounts signed in on the profile: account, issuer, scopes, expiry, active')
      .action(
        lazyAction(
          ctx,
          () => import('./list.js'),
          () => ({}),
        ),
      ),
    'opsctl auth list',
    'opsctl auth list --json',
  );
  examples(
    auth
      .command('switch [account]')
      .description('make another signed-in account the active one (a picker on a terminal; name ACCOUNT without one)')
      .action(
        lazyAction(
          ctx,
          () => import('./switch.js'),
          ([account]) => ({ account }),
        ),
      ),
    'opsctl auth switch bob@example.com',
    'opsctl auth switch              # pick from a list',
  );
  examples(
    auth
      .command('token')
      .description('print a valid OAuth access token for scripts (refreshed first when less than 5 minutes remain); --json adds expiry and scopes')
      .option('--account <account>', 'a signed-in account other than the active one')
      .option('--id-token', 'print the ID token instead (for a service that checks its audience); renewed first when it is about to expire')
      .option('--refresh-token', "print the refresh token instead (a CI job's OPSCTL_REFRESH_TOKEN); handle it like a password")
      .action(
        lazyAction(
          ctx,
          () => import('./token.js'),
          (_a, o) => ({ account: o.account, idToken: Boolean(o.idToken), refreshToken: Boolean(o.refreshToken) }),
        ),
      ),
    'curl -H "Authorization: Bearer $(opsctl auth token)" "$API/media/v3/channels?part=id&mine=true"',
    'opsctl auth token --account bob@example.com --json',
    'curl -H "Authorization: Bearer $(opsctl auth token --id-token)" https://internal.example/   # a service that checks the ID token\'s audience',
  );
  examples(
    auth
      .command('refresh')
      .description(
        'add scopes to the active account: asks only for the new ones (include_granted_scopes=true) and keeps the earlier grant; or --remove-scopes: narrower access tokens from now on (no browser)',
      )
      .option('--scopes <scope...>', 'the scopes to add (short names like media.upload expand)')
      .option(
        '--remove-scopes <scope...>',
        'the scopes to drop from the access tokens (a refresh with a narrower scope; the grant stays at the server until logout)',
      )
      .option('--account <account>', 'a signed-in account other than the active one')
      .option('--no-browser', 'do not open a browser: print the URL, and accept the redirected URL pasted back')
      .option('--timeout <duration>', 'how long to wait for the browser', '5m')
      .option('--consent-as <email>', 'LOCAL MOCK only: submit the consent form as this seeded account, no browser')
      .option('--insecure-storage', 'keep the tokens in the 0600 credential file, not the OS keyring')
      .action(
        lazyAction(
          ctx,
          () => import('./refresh.js'),
          (_a, o) => ({
            scopes: o.scopes,
            removeScopes: o.removeScopes,
            account: o.account,
            browser: o.browser !== false,
            timeout: String(o.timeout),
            consentAs: o.consentAs,
            insecureStorage: o.insecureStorage ? true : undefined,
          }),
        ),
      ),
    'opsctl auth refresh --scopes media.upload',
    'opsctl auth refresh --remove-scopes drive.labels',
  );
}
