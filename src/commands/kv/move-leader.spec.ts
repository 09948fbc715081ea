import { defineVerb, type RunModule } from '../spec.js';
import { etcdctlLike } from './lib/cluster-flags.js';

export const spec = defineVerb({
  name: 'move-leader',
  args: [{ name: '<member>', field: 'memberId', help: "the member's name, or its id (hex as kv member list prints it, or #decimal)" }],
  summary: 'hand the leadership to another member (etcd 3.3+), e.g. before stopping the leader',
  flags: etcdctlLike,
  examples: ['opsctl kv move-leader 8e9e05c52164694d', 'opsctl kv move-leader etcd2'],
  load: (): RunModule => import('./move-leader.js'),
});
