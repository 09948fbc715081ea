import { defineVerb, type RunModule } from '../spec.js';
import { etcdctlLike } from './lib/cluster-flags.js';

export const spec = defineVerb({
  name: 'keep-alive',
  args: ['<lease-id>'],
  summary: 'keep a lease alive: renewed at a third of its TTL until Ctrl-C or it is gone; --once renews it once',
  flags: { ...etcdctlLike, once: { type: 'boolean', help: 'renew it once and exit' } },
  examples: ['opsctl kv lease keep-alive 694d77aa9e38260f --once'],
  load: (): RunModule => import('./lease-keep-alive.js'),
});
