import { NOUN_SUMMARIES } from '../nouns.js';
import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'logout',
  summary: NOUN_SUMMARIES.logout,
  flags: { account: { type: 'string', value: 'account', help: 'sign out this account (default: the active one; the next becomes active)' } },
  examples: ['opsctl logout', 'opsctl logout --profile work', 'opsctl logout --account bob@example.com'],
  load: (): RunModule => import('./logout.js'),
});
