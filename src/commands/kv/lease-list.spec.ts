import { defineVerb, type RunModule } from '../spec.js';
import { etcdctlLike } from './lib/cluster-flags.js';

export const spec = defineVerb({
  name: 'list',
  summary: 'every lease the cluster holds (etcd 3.3+)',
  flags: etcdctlLike,
  examples: ['opsctl kv lease list'],
  load: (): RunModule => import('./lease-list.js'),
});
