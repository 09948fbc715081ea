import { defineVerb, type RunModule } from '../spec.js';
import { etcdctlLike } from './lib/cluster-flags.js';

export const spec = defineVerb({
  name: 'add',
  args: ['<name>'],
  summary: 'add a member (as a learner with --learner, etcd 3.4+); prints the settings its first start needs',
  flags: {
    ...etcdctlLike,
    peerUrls: { type: 'string', value: 'urls', help: 'its peer URLs, comma-separated', required: true },
    learner: { type: 'boolean', help: 'as a learner (etcd 3.4+): it catches up before it votes' },
  },
  examples: ['opsctl kv member add kv4 --peer-urls http://10.0.0.4:2380', 'opsctl kv member add kv4 --peer-urls http://10.0.0.4:2380 --learner'],
  load: (): RunModule => import('./member-add.js'),
});
