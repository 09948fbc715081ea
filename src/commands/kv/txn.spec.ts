import { defineVerb, type RunModule } from '../spec.js';
import { etcdctlLike } from './lib/cluster-flags.js';

export const spec = defineVerb({
  name: 'txn',
  summary:
    "a transaction in etcdctl's language: compares, then the requests if they hold, then if not (blank lines between); from --file, stdin, or asked on a terminal",
  flags: { ...etcdctlLike, file: { type: 'string', value: 'path', home: true, help: 'read the transaction from this file (- for stdin)' } },
  examples: ['printf \'mod("k") = "0"\\n\\nput k v\\n\\nget k\\n\' | opsctl kv txn -w simple', 'opsctl kv txn --file ./txn.txt'],
  load: (): RunModule => import('./txn.js'),
});
