import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'status',
  summary:
    'show the active account, its issuer, granted and missing scopes, token expiry and where the token is stored (exit 4 if not signed in, or signed in at another issuer)',
  flags: { all: { type: 'boolean', help: 'every account of every profile, from the credential file (exit 4 if an active one needs a new sign-in)' } },
  examples: ['opsctl auth status', 'opsctl auth status --json', 'opsctl auth status --all'],
  load: (): RunModule => import('./status.js'),
});
