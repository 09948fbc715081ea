import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'deliver',
  summary: 'try every pending SET now instead of at its next retry',
  examples: ['opsctl mock events deliver'],
  load: (): RunModule => import('./events-deliver.js'),
});
