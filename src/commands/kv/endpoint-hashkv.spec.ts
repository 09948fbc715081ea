import { defineVerb, type RunModule } from '../spec.js';
import { perMember } from './lib/cluster-flags.js';

export const spec = defineVerb({
  name: 'hashkv',
  summary: "each member's KV hash at a revision (etcd 3.3+; 3.3 and 3.4 through etcdctl)",
  flags: {
    ...perMember,
    rev: { type: 'string', value: 'revision', help: 'the revision (default: the latest)' },
    etcdctl: { type: 'string', value: 'path', home: true, help: 'the etcdctl for 3.3 and 3.4 members' },
  },
  examples: ['opsctl kv endpoint hashkv', 'opsctl kv endpoint hashkv --rev 1234'],
  load: (): RunModule => import('./endpoint-hashkv.js'),
});
