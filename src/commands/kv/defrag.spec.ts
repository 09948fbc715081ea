import { defineVerb, type RunModule } from '../spec.js';
import { etcdctlLike } from './lib/flags.js';

export const spec = defineVerb({
  name: 'defrag',
  summary: "defragment each member's db (its reads and writes wait while it runs): every member, or --member-list",
  flags: { ...etcdctlLike, memberList: { type: 'boolean', help: "every member of the cluster's member list (etcdctl's --cluster)" } },
  examples: ['opsctl kv defrag', 'opsctl kv defrag --endpoints http://10.0.0.1:2379'],
  load: (): RunModule => import('./defrag.js'),
});
