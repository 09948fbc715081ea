import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'list',
  aliases: ['ls'],
  summary: 'list the accounts signed in on the profile: account, issuer, scopes, expiry, active',
  examples: ['opsctl auth list', 'opsctl auth list --json'],
  load: (): RunModule => import('./list.js'),
});
