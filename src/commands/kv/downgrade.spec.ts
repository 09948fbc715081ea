import { defineVerb, type RunModule } from '../spec.js';
import { cluster, driver, dryRun, etcdctl, restoreBackupCmd, snapshotTimeout, snapshotVia, targetBin, trialTimeout } from './lib/flags.js';

export const spec = defineVerb({
  name: 'downgrade',
  summary: "take a 3.6 cluster back to 3.5 with etcd's downgrade API, one member at a time (journalled, resumable)",
  flags: {
    ...cluster,
    ...driver,
    to: { type: 'string', value: 'minor', help: 'the target minor: the previous one (3.5 for a 3.6 cluster)', required: true, suggest: ['3.5'] },
    dryRun,
    settle: { type: 'string', value: 'auto|duration', help: 'wait after each member: auto = measured catch-up', default: 'auto' },
    backup: { type: 'negated', help: 'command driver without a backup template: downgrade without backing up the data dirs' },
    targetBin: targetBin('real etcd: the directory with the 3.5 etcd binary (3.5=DIR)'),
    snapshotVia,
    etcdctl,
    clusterVersionTimeout: {
      type: 'string',
      value: 'duration',
      help: 'how long the cluster version may take to drop to --to, and the downgrade to end',
      default: '2m',
    },
    snapshotTimeout,
    onFailure: {
      type: 'string',
      value: 'halt|rollback',
      help: 'a member that never becomes healthy on --to: halt there, or put it back on 3.6 first',
      default: 'halt',
    },
    restoreBackupCmd,
    trialTimeout,
  },
  examples: ['opsctl kv downgrade --to 3.5 --dry-run', 'opsctl kv downgrade --to 3.5 --target-bin 3.5=/opt/etcd-3.5', 'opsctl kv downgrade --to 3.5 --json'],
  load: (): RunModule => import('./downgrade.js'),
});
