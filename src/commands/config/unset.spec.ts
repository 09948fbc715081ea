import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'unset',
  args: ['<key>'],
  summary: 'remove a setting of the active profile',
  examples: ['opsctl config unset labels --profile work'],
  load: (): RunModule => import('./unset.js'),
});
