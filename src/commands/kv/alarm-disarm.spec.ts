import { defineVerb, type RunModule } from '../spec.js';
import { etcdctlLike } from './lib/cluster-flags.js';

export const spec = defineVerb({
  name: 'disarm',
  summary: 'disarm every raised alarm (after freeing space: compact, defrag)',
  flags: etcdctlLike,
  examples: ['opsctl kv alarm disarm'],
  load: (): RunModule => import('./alarm-disarm.js'),
});
