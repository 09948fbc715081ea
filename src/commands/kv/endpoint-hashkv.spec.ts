import { defineVerb, type RunModule } from '../spec.js';
import { etcdctlLike } from './lib/flags.js';

export const spec = defineVerb({
  name: 'hashkv',
  summary: "each member's KV hash at a revision (etcd 3.3+; 3.3 and 3.4 through etcdctl)",
  flags: {
    ...etcdctlLike,
    rev: { type: 'string', value: 'revision', help: 'the revision (default: the latest)' },
    etcdctl: { type: 'string', value: 'path', help: 'the etcdctl for 3.3 and 3.4 members' },
    memberList: { type: 'boolean', help: "every member of the cluster's member list (etcdctl's --cluster)" },
  },
  examples: ['opsctl kv endpoint hashkv', 'opsctl kv endpoint hashkv --rev 1234'],
  load: (): RunModule => import('./endpoint-hashkv.js'),
});
