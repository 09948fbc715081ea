import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'capabilities',
  summary: 'what you may do with labels (users/me/capabilities)',
  examples: ['opsctl labels capabilities', 'opsctl labels capabilities --json'],
  load: (): RunModule => import('./capabilities.js'),
});
