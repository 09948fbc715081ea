import { defineVerb, type RunModule } from '../spec.js';
import { etcdctlLike } from './lib/cluster-flags.js';

export const spec = defineVerb({
  name: 'watch',
  args: [{ name: '<key>', field: 'kvKey' }, '[range-end]'],
  summary: 'follow a key, a range or a prefix: each change as it happens (from --rev on), until Ctrl-C or --max-events',
  flags: {
    ...etcdctlLike,
    prefix: { type: 'boolean', help: 'every key that starts with KEY' },
    rev: { type: 'string', value: 'revision', help: 'from this revision on (the history since then first)' },
    prevKv: { type: 'boolean', help: 'each change with the value before it' },
    maxEvents: { type: 'string', value: 'n', help: 'exit 0 after this many changes' },
    timeout: { type: 'string', value: 'duration', help: 'exit 0 after this long (default: until Ctrl-C)' },
  },
  examples: ['opsctl kv watch config/ --prefix', 'opsctl kv watch config/mode --rev 1 --max-events 3 -w simple'],
  load: (): RunModule => import('./watch.js'),
});
