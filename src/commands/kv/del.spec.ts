import { defineVerb, type RunModule } from '../spec.js';
import { etcdctlLike } from './lib/cluster-flags.js';

export const spec = defineVerb({
  name: 'del',
  args: [{ name: '<key>', field: 'kvKey' }, '[range-end]'],
  summary: 'delete a key, a range [key, end) or every key under a prefix; prints how many',
  flags: {
    ...etcdctlLike,
    prefix: { type: 'boolean', help: 'every key that starts with KEY' },
    prevKv: { type: 'boolean', help: 'also print what was deleted' },
  },
  examples: ['opsctl kv del config/mode', 'opsctl kv del config/ --prefix'],
  load: (): RunModule => import('./del.js'),
});
