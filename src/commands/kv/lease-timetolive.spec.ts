import { defineVerb, type RunModule } from '../spec.js';
import { etcdctlLike } from './lib/cluster-flags.js';

export const spec = defineVerb({
  name: 'timetolive',
  args: ['<lease-id>'],
  summary: "a lease's granted and remaining TTL (and its keys with --keys); an expired lease says it already expired",
  flags: { ...etcdctlLike, keys: { type: 'boolean', help: 'also the keys attached to it' } },
  examples: ['opsctl kv lease timetolive 694d77aa9e38260f --keys', 'opsctl kv lease timetolive 694d77aa9e38260f -w simple'],
  load: (): RunModule => import('./lease-timetolive.js'),
});
