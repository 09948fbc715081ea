import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'sweep',
  summary: 'run the automatic deletion of unused clients now (the mock: no use for 180 days)',
  examples: ['opsctl mock clients sweep'],
  load: (): RunModule => import('./clients-sweep.js'),
});
