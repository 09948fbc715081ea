import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'get',
  args: ['<key>'],
  summary: 'print one setting of the active profile (or "profile", the default profile)',
  examples: ['opsctl config get tracker --profile work'],
  load: (): RunModule => import('./get.js'),
});
