import { defineVerb, type RunModule } from '../spec.js';
import { cluster } from './lib/cluster-flags.js';

export const spec = defineVerb({
  name: 'get',
  // the key's field is kvKey: --key names the TLS client key
  args: [{ name: '<key>', field: 'kvKey' }, '[range-end]'],
  summary: 'read a key, a range [key, end), every key under a prefix or from a key on (etcdctl get)',
  flags: {
    ...cluster,
    writeOut: {
      type: 'string',
      short: 'w',
      value: 'format',
      choices: ['table', 'simple', 'json', 'fields'],
      help: "table (a terminal's default; tab-separated when piped); etcdctl's own output: simple (key and value lines), json (keys and values base64), fields",
    },
    prefix: { type: 'boolean', help: 'every key that starts with KEY' },
    fromKey: { type: 'boolean', help: 'every key from KEY on (byte order)' },
    keysOnly: { type: 'boolean', help: 'the keys alone, one a line' },
    countOnly: { type: 'boolean', help: 'the number of keys alone' },
    printValueOnly: { type: 'boolean', help: 'the values alone, one a line' },
    rev: { type: 'string', value: 'revision', help: 'the keys as they were at this revision' },
    limit: { type: 'string', value: 'n', help: 'at most this many keys (the count says how many there are)' },
    sortBy: {
      type: 'string',
      value: 'target',
      suggest: ['KEY', 'VERSION', 'CREATE', 'MODIFY', 'VALUE'],
      help: 'sort by KEY, VERSION, CREATE, MODIFY or VALUE',
    },
    order: { type: 'string', value: 'order', suggest: ['ASCEND', 'DESCEND'], help: 'ASCEND (the default) or DESCEND' },
    consistency: {
      type: 'string',
      value: 'l|s',
      suggest: ['l', 's'],
      help: "l: linearizable, confirmed by a quorum (the default); s: serializable, the member's own copy",
    },
    minModRev: { type: 'string', value: 'revision', help: 'only keys last changed at this revision or later' },
    maxModRev: { type: 'string', value: 'revision', help: 'only keys last changed at this revision or earlier' },
    minCreateRev: { type: 'string', value: 'revision', help: 'only keys created at this revision or later' },
    maxCreateRev: { type: 'string', value: 'revision', help: 'only keys created at this revision or earlier' },
    require: { type: 'boolean', help: 'exit 1 when no key matches (as etcdctl, a missing key is otherwise exit 0 with nothing printed)' },
  },
  help: `
A missing key prints nothing and exits 0, as etcdctl does; --require makes it exit 1 for a script that
needs the key. One key prints its value; a range (a range end, --prefix, --from-key) a table of key, value,
revisions, version and lease (tab-separated when piped); -w simple, json and fields print what etcdctl
prints. ETCDCTL_ENDPOINTS and its family are read when no flag says otherwise (opsctl help environment).`,
  examples: [
    'opsctl kv get config/mode',
    'opsctl kv get config/ --prefix',
    'opsctl kv get config/ --prefix --keys-only',
    'opsctl kv get config/a config/m --rev 42 --limit 10',
    'opsctl kv get config/mode --require || echo "no mode set"',
    'opsctl kv get config/ --prefix -w json',
  ],
  load: (): RunModule => import('./get.js'),
});
