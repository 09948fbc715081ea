import { NOUN_SUMMARIES } from '../nouns.js';
import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'login',
  summary: NOUN_SUMMARIES.login,
  flags: {
    scopes: { type: 'list', value: 'scope', help: "scopes to request (short names like media.readonly expand; default: the profile's scopes)" },
    loginHint: { type: 'string', value: 'email', help: 'preselect this account on the sign-in page' },
    browser: { type: 'negated', help: 'do not open a browser: print the URL, and accept the redirected URL pasted back (remote/SSH)' },
    timeout: { type: 'string', value: 'duration', help: 'how long to wait for the browser, e.g. 90s, 5m', default: '5m' },
    port: { type: 'string', value: 'port', help: 'loopback port for the redirect listener, 1024..65535 (default: any free port)' },
    device: {
      type: 'boolean',
      help: 'sign in with a one-time code entered on any device with a browser (RFC 8628 device grant; for SSH sessions and containers)',
    },
    insecureStorage: { type: 'boolean', help: 'keep the tokens in the 0600 credential file instead of the OS keyring' },
    withOidcToken: {
      type: 'string',
      value: 'file|-',
      help: "keyless CI: exchange the CI's OIDC token (a JWT in this file, - for stdin; or OPSCTL_OIDC_TOKEN_FILE) at the provider for an access token (RFC 8693); no browser",
    },
    consentAs: {
      type: 'string',
      value: 'email',
      help: "headless sign-in to a LOCAL MOCK only (embedded or opsctl mock serve on loopback): no browser; opsctl submits the mock's consent form itself as this seeded account (e.g. alice@example.com), granting every requested scope. Refused for any other server",
    },
  },
  examples: [
    'opsctl login                          # adds the account and makes it active (opsctl auth list, auth switch)',
    'opsctl login --scopes media.readonly openid email --login-hint alice@example.com',
    'opsctl login --no-browser            # over SSH: open the URL elsewhere, paste the redirected URL back',
    'opsctl login --profile work --timeout 10m',
    'opsctl login --device                 # no browser here: enter the code it shows on any device with one',
    'opsctl login --with-oidc-token "$CI_OIDC_TOKEN_FILE" --insecure-storage   # keyless CI: the CI\'s OIDC token exchanged (RFC 8693)',
    'opsctl login --consent-as alice@example.com   # no browser at all, local mock only: grants every requested scope as alice',
  ],
  load: (): RunModule => import('./login.js'),
});
