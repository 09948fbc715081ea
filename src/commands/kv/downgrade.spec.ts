import { DOWNGRADE_FROM, DOWNGRADE_TO } from '@opsctl/shared/etcd-ladder.js';
import { defineVerb, type RunModule } from '../spec.js';

/** "3.6 → 3.5 or 3.7 → 3.6": each minor etcd's downgrade API takes a cluster from (the ladder's table). */
const WAYS = DOWNGRADE_FROM.map((m, i) => `${m} → ${DOWNGRADE_TO[i]}`).join(' or ');
import { cluster, driver, dryRun, etcdctl, keepBackups, snapshotTimeout, snapshotVia, targetBin, trialTimeout, verbTemplates } from './lib/flags.js';

export const spec = defineVerb({
  name: 'downgrade',
  summary: `take a cluster back one minor (${WAYS}) with etcd's downgrade API, one member at a time (journalled, resumable)`,
  flags: {
    ...cluster,
    ...driver,
    to: {
      type: 'string',
      value: 'minor',
      help: `the target minor: the previous one (${DOWNGRADE_FROM.map((m, i) => `${DOWNGRADE_TO[i]} for a ${m} cluster`).join(', ')})`,
      required: true,
      suggest: DOWNGRADE_TO,
    },
    dryRun,
    settle: { type: 'string', value: 'auto|duration', help: 'wait after each member: auto = measured catch-up', default: 'auto' },
    backup: { type: 'negated', help: 'command driver without a backup template: downgrade without backing up the data dirs' },
    keepBackups,
    targetBin: targetBin('real etcd: the directory with the etcd binary of --to (e.g. 3.6=DIR)'),
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
      help: 'a member that never becomes healthy on --to: halt there, or put it back on its newer binary first',
      default: 'halt',
    },
    ...verbTemplates('downgrade'),
    trialTimeout,
  },
  examples: ['opsctl kv downgrade --to 3.5 --dry-run', 'opsctl kv downgrade --to 3.5 --target-bin 3.5=/opt/etcd-3.5', 'opsctl kv downgrade --to 3.5 --json'],
  load: (): RunModule => import('./downgrade.js'),
});
