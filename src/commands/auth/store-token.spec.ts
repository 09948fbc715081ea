import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'store-token',
  summary:
    'store a credential for a service, read from stdin with --with-token: the tracker token, or (--service oauth) an OAuth account as JSON {refresh_token, client_id, issuer}',
  flags: {
    service: { type: 'string', value: 'service', help: 'the service the token is for', choices: ['tracker', 'oauth'], default: 'tracker' },
    withToken: { type: 'boolean', help: 'read the token from standard input' },
    insecureStorage: { type: 'boolean', help: '--service oauth: keep the account in the 0600 credential file (needed where there is no OS keyring, e.g. CI)' },
  },
  examples: [
    'opsctl auth store-token --service tracker --with-token < token.txt',
    'echo "$TRACKER_TOKEN" | opsctl auth store-token --service tracker --with-token --profile work',
    'echo \'{"refresh_token":"…","client_id":"…","issuer":"https://…"}\' | opsctl auth store-token --service oauth --with-token',
  ],
  load: (): RunModule => import('./store-token.js'),
});
