import { defineVerb, type RunModule } from '../spec.js';
import { cluster } from './lib/cluster-flags.js';

export const spec = defineVerb({
  name: 'health',
  summary: '/health of every member',
  flags: cluster,
  examples: ['opsctl kv health', 'opsctl kv health --endpoints http://10.0.0.1:2379,http://10.0.0.2:2379 --json'],
  load: (): RunModule => import('./health.js'),
});
