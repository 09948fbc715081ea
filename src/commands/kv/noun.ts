import { NOUN_SUMMARIES } from '../nouns.js';
import { withCommandTimeout } from './lib/etcdctl-env.js';
import { spec as backupsList } from './backups-list.spec.js';
import { spec as backupsPrune } from './backups-prune.spec.js';
import { spec as downgrade } from './downgrade.spec.js';
import { spec as get } from './get.spec.js';
import { spec as health } from './health.spec.js';
import { spec as put } from './put.spec.js';
import { spec as releaseGet } from './release-get.spec.js';
import { spec as releaseList } from './release-list.spec.js';
import { spec as restore } from './restore.spec.js';
import { spec as rollback } from './rollback.spec.js';
import { spec as sandboxDown } from './sandbox-down.spec.js';
import { spec as sandboxStatus } from './sandbox-status.spec.js';
import { spec as sandboxUp } from './sandbox-up.spec.js';
import { spec as snapshotSave } from './snapshot-save.spec.js';
import { spec as snapshotStatus } from './snapshot-status.spec.js';
import { spec as status } from './status.spec.js';
import { spec as upgrade } from './upgrade.spec.js';
import { spec as version } from './version.spec.js';
import { spec as leaseGrant } from './lease-grant.spec.js';
import { spec as leaseRevoke } from './lease-revoke.spec.js';
import { spec as leaseTimetolive } from './lease-timetolive.spec.js';
import { spec as leaseList } from './lease-list.spec.js';
import { spec as leaseKeepAlive } from './lease-keep-alive.spec.js';
import { spec as memberList } from './member-list.spec.js';
import { spec as memberAdd } from './member-add.spec.js';
import { spec as memberRemove } from './member-remove.spec.js';
import { spec as memberUpdate } from './member-update.spec.js';
import { spec as memberPromote } from './member-promote.spec.js';
import { spec as moveLeader } from './move-leader.spec.js';
import { spec as alarmList } from './alarm-list.spec.js';
import { spec as alarmDisarm } from './alarm-disarm.spec.js';
import { spec as defrag } from './defrag.spec.js';
import { spec as compact } from './compact.spec.js';
import { spec as endpointHealth } from './endpoint-health.spec.js';
import { spec as endpointStatus } from './endpoint-status.spec.js';
import { spec as endpointHashkv } from './endpoint-hashkv.spec.js';
import { spec as del } from './del.spec.js';
import { spec as watch } from './watch.spec.js';
import { spec as txn } from './txn.spec.js';

/**
 * `opsctl kv …`: health, versions, snapshots, gateway put/get, the sandbox, and the rolling upgrade. Its verbs, in --help order
 * (each given ETCDCTL_COMMAND_TIMEOUT as its --request-timeout when the flag is not given). Every spec of the noun: what its
 * --help, the whole tree and a command line that names no one verb build (index.ts); verb-index.ts, generated from this,
 * holds what a command line naming one verb needs (npm run gen:kv-index after a change here or in a verb's name).
 */
export const noun = withCommandTimeout({
  name: 'kv',
  summary: NOUN_SUMMARIES.kv,
  examples: [
    'opsctl kv sandbox up --members 3 --version 3.2',
    'opsctl kv upgrade --to 3.3 --dry-run',
    'opsctl kv upgrade --to 3.3',
    'opsctl kv health --endpoints http://10.0.0.1:2379,http://10.0.0.2:2379',
  ],
  verbs: [
    upgrade,
    downgrade,
    rollback,
    restore,
    health,
    version,
    status,
    put,
    get,
    del,
    watch,
    txn,
    {
      name: 'endpoint',
      summary: "each member as etcdctl's endpoint verbs show it: health (a quorum read), status, KV hash",
      verbs: [endpointHealth, endpointStatus, endpointHashkv],
    },
    {
      name: 'member',
      summary: "the cluster's members: list, add (as a learner), remove, update, promote",
      verbs: [memberList, memberAdd, memberRemove, memberUpdate, memberPromote],
    },
    moveLeader,
    {
      name: 'lease',
      summary: 'leases: grant, revoke, time to live, list, keep alive',
      verbs: [leaseGrant, leaseRevoke, leaseTimetolive, leaseList, leaseKeepAlive],
    },
    { name: 'alarm', summary: 'the raised alarms (NOSPACE, CORRUPT): list, disarm', verbs: [alarmList, alarmDisarm] },
    defrag,
    compact,
    { name: 'snapshot', summary: 'v3 snapshots', verbs: [snapshotSave, snapshotStatus] },
    { name: 'sandbox', summary: 'a local cluster on loopback, the default cluster of the kv commands', verbs: [sandboxUp, sandboxStatus, sandboxDown] },
    {
      name: 'release',
      summary: 'official etcd release archives, verified (SHA256SUMS, etcd --version) and cached for kv upgrade',
      verbs: [releaseGet, releaseList],
    },
    {
      name: 'backups',
      summary: "the data-dir backups, snapshots and kept data dirs of opsctl's upgrades and restores on this machine",
      verbs: [backupsList, backupsPrune],
    },
  ],
});
