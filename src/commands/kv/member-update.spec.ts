import { defineVerb, type RunModule } from '../spec.js';
import { etcdctlLike } from './lib/cluster-flags.js';

export const spec = defineVerb({
  name: 'update',
  args: [{ name: '<member>', field: 'memberId', help: "the member's name, or its id (hex as kv member list prints it, or #decimal)" }],
  summary: "change a member's peer URLs",
  flags: { ...etcdctlLike, peerUrls: { type: 'string', value: 'urls', help: 'its new peer URLs, comma-separated', required: true } },
  examples: ['opsctl kv member update 8e9e05c52164694d --peer-urls http://10.0.0.9:2380'],
  load: (): RunModule => import('./member-update.js'),
});
