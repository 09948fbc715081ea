import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'refresh',
  summary:
    'add scopes to the active account: asks only for the new ones (include_granted_scopes=true) and keeps the earlier grant; or --remove-scopes: narrower access tokens from now on (no browser)',
  flags: {
    scopes: { type: 'list', value: 'scope', help: 'the scopes to add (short names like media.upload expand)' },
    removeScopes: {
      type: 'list',
      value: 'scope',
      help: 'the scopes to drop from the access tokens (a refresh with a narrower scope; the grant stays at the server until logout)',
    },
    account: { type: 'string', value: 'account', help: 'a signed-in account other than the active one' },
    browser: { type: 'negated', help: 'do not open a browser: print the URL, and accept the redirected URL pasted back' },
    timeout: { type: 'string', value: 'duration', help: 'how long to wait for the browser', default: '5m' },
    consentAs: { type: 'string', value: 'email', help: 'LOCAL MOCK only: submit the consent form as this seeded account, no browser' },
    insecureStorage: { type: 'boolean', help: 'keep the tokens in the 0600 credential file, not the OS keyring' },
  },
  examples: ['opsctl auth refresh --scopes media.upload', 'opsctl auth refresh --remove-scopes drive.labels'],
  load: (): RunModule => import('./refresh.js'),
});
