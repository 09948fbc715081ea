import { defineVerb, type RunModule } from '../spec.js';
import { etcdctlLike } from './lib/flags.js';

export const spec = defineVerb({
  name: 'promote',
  args: ['<member-id>'],
  summary: 'promote a learner to a voting member (etcd 3.4+)',
  flags: etcdctlLike,
  examples: ['opsctl kv member promote 8e9e05c52164694d'],
  load: (): RunModule => import('./member-promote.js'),
});
