import { defineVerb, type RunModule } from '../spec.js';
import { perMember } from './lib/cluster-flags.js';

export const spec = defineVerb({
  name: 'health',
  summary: 'each member: a quorum read (a linearizable range, as etcdctl) and how long it took',
  flags: perMember,
  examples: ['opsctl kv endpoint health', 'opsctl kv endpoint health -w simple'],
  load: (): RunModule => import('./endpoint-health.js'),
});
