import { defineVerb, type RunModule } from '../spec.js';
import { etcdctlLike } from './lib/cluster-flags.js';

export const spec = defineVerb({
  name: 'list',
  summary: "the cluster's member list: id, status, name, peer and client URLs, learner",
  flags: etcdctlLike,
  examples: ['opsctl kv member list', 'opsctl kv member list -w simple'],
  load: (): RunModule => import('./member-list.js'),
});
