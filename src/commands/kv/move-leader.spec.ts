import { defineVerb, type RunModule } from '../spec.js';
import { etcdctlLike } from './lib/flags.js';

export const spec = defineVerb({
  name: 'move-leader',
  args: ['<member-id>'],
  summary: 'hand the leadership to another member (etcd 3.3+), e.g. before stopping the leader',
  flags: etcdctlLike,
  examples: ['opsctl kv move-leader 8e9e05c52164694d'],
  load: (): RunModule => import('./move-leader.js'),
});
