import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'switch',
  args: ['[account]'],
  summary: 'make another signed-in account the active one (a picker on a terminal; name ACCOUNT without one)',
  examples: ['opsctl auth switch bob@example.com', 'opsctl auth switch              # pick from a list'],
  load: (): RunModule => import('./switch.js'),
});
