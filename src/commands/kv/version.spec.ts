import { defineVerb, type RunModule } from '../spec.js';
import { cluster } from './lib/cluster-flags.js';

export const spec = defineVerb({
  name: 'version',
  summary: 'server and cluster version of every member',
  flags: cluster,
  examples: ['opsctl kv version', 'opsctl kv version --json'],
  load: (): RunModule => import('./version.js'),
});
