import { defineVerb, type RunModule } from '../spec.js';
import { etcdctlLike } from './lib/cluster-flags.js';

export const spec = defineVerb({
  name: 'grant',
  args: ['<ttl>'],
  summary: 'a lease of TTL seconds (keys put with --lease live as long as it)',
  flags: etcdctlLike,
  examples: ['opsctl kv lease grant 60', 'opsctl kv lease grant 60 -w simple'],
  load: (): RunModule => import('./lease-grant.js'),
});
