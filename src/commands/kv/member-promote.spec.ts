import { defineVerb, type RunModule } from '../spec.js';
import { etcdctlLike } from './lib/cluster-flags.js';

export const spec = defineVerb({
  name: 'promote',
  args: [{ name: '<member>', field: 'memberId', help: "the member's name, or its id (hex as kv member list prints it, or #decimal)" }],
  summary: 'promote a learner to a voting member (etcd 3.4+)',
  flags: etcdctlLike,
  examples: ['opsctl kv member promote 8e9e05c52164694d'],
  load: (): RunModule => import('./member-promote.js'),
});
