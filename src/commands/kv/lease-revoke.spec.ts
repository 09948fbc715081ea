import { defineVerb, type RunModule } from '../spec.js';
import { etcdctlLike } from './lib/cluster-flags.js';

export const spec = defineVerb({
  name: 'revoke',
  args: ['<lease-id>'],
  summary: 'revoke a lease: the keys attached to it are deleted',
  flags: etcdctlLike,
  examples: ['opsctl kv lease revoke 694d77aa9e38260f'],
  load: (): RunModule => import('./lease-revoke.js'),
});
