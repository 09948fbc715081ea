import { defineVerb, type RunModule } from '../spec.js';
import { perMember } from './lib/cluster-flags.js';

export const spec = defineVerb({
  name: 'status',
  summary: 'each member: id, version, db size, leader, learner, raft term and index',
  flags: perMember,
  examples: ['opsctl kv endpoint status', 'opsctl kv endpoint status -w simple'],
  load: (): RunModule => import('./endpoint-status.js'),
});
