import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'status',
  args: ['<file>'],
  summary: 'hash, revision, total keys and size of a snapshot file (its SHA-256 trailer checked)',
  flags: {
    etcdctl: {
      type: 'string',
      value: 'path',
      home: true,
      help: "cross-check with this etcdctl's snapshot status (or the etcdutl beside it); default: the one installed, if any",
      negate: 'no cross-check with etcdctl/etcdutl (the page walk only)',
    },
  },
  examples: ['opsctl kv snapshot status backup.db', 'opsctl kv snapshot status backup.db --json'],
  load: (): RunModule => import('./snapshot-status.js'),
});
