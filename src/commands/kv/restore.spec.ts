import { defineVerb, type RunModule } from '../spec.js';
import { cluster, driver, s3, verbTemplates } from './lib/flags.js';

export const spec = defineVerb({
  name: 'restore',
  summary: 'rebuild every member from a verified snapshot (old data dirs kept): the way back after the cluster version moved',
  flags: {
    ...cluster,
    ...driver,
    snapshot: { type: 'string', value: 'file', home: true, help: "the snapshot to restore (kv status names the last upgrade's restore point)" },
    from: {
      type: 'string',
      value: 's3://bucket/key',
      help: 'instead of --snapshot: a backup uploaded there (or the newest under a prefix), downloaded and checked against its manifest first',
    },
    ...s3,
    fromHop: {
      type: 'string',
      value: 'minor',
      help: "instead of --snapshot: the restore point taken before the upgrade's hop off this minor (e.g. 3.3), restored on it",
    },
    toVersion: { type: 'string', value: 'minor', help: 'start the members on this version (default: the version the last upgrade started from)' },
    targetBin: {
      type: 'string',
      value: 'dir',
      home: true,
      help: 'real etcd: the release directory to start (its etcdutl, before 3.5 its etcdctl, restores the data)',
    },
    ...verbTemplates('restore'),
    again: {
      type: 'boolean',
      help: 'restore the snapshot although the last restore recorded here restored it already (every write since is lost); without it, that command run again says so and changes nothing',
    },
    dryRun: { type: 'boolean', help: 'check everything and print the plan; change nothing' },
  },
  examples: [
    'opsctl kv restore --snapshot backup.db --dry-run',
    'opsctl kv restore --snapshot backup.db --to-version 3.2 --yes',
    'opsctl kv restore --from-hop 3.4 --dry-run',
    'opsctl kv restore --from s3://backups/etcd/prod --to-version 3.4 --dry-run',
    'opsctl kv restore --cluster prod.yaml --snapshot /var/backups/etcd.db --to-version 3.2',
  ],
  load: (): RunModule => import('./restore.js'),
});
