import { CONFIRM_HELP } from '../action.js';
import { backupsFrom, s3 } from './lib/flags.js';
import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'prune',
  summary: `keep the newest runs' backups of each cluster, remove the rest (never those an upgrade in progress needs); ${CONFIRM_HELP}`,
  flags: {
    ...backupsFrom,
    ...s3,
    keep: { type: 'string', value: 'n', help: 'how many runs to keep per cluster', default: '1' },
    staleAfter: {
      type: 'string',
      value: 'duration',
      help: 'with --from: also remove what interrupted saves left (uploads never completed, snapshots without a manifest) begun longer ago than this (default 24h)',
    },
    cluster: {
      type: 'string',
      value: 'file',
      home: true,
      help: "the cluster file the upgrade ran with: its driver removes the data-dir copies on the members' hosts (a command driver's drop-backup template; a container driver's copies, and the containers the pruned runs kept)",
    },
    dryRun: { type: 'boolean', help: 'show what would be removed, and remove nothing' },
  },
  examples: [
    'opsctl kv backups prune --dry-run',
    'opsctl kv backups prune --keep 2 --yes',
    'opsctl kv backups prune --cluster prod.yaml --yes',
    'opsctl kv backups prune --from s3://backups/etcd/prod --keep 7 --yes',
  ],
  load: (): RunModule => import('./backups-prune.js'),
});
