import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'limits',
  summary: 'the structural limits of a label (limits/label)',
  examples: ['opsctl labels limits', 'opsctl labels limits --json=maxFields,fieldLimits'],
  load: (): RunModule => import('./limits.js'),
});
