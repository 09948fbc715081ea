import { LADDER_TARGETS, LADDER_TOP, ladderSpan } from '@opsctl/shared/etcd-ladder.js';
import { EXIT_CODE_FLAG } from '../action.js';
import { defineVerb, type RunModule } from '../spec.js';
import { cluster, driver, dryRun, etcdctl, keepBackups, snapshotTimeout, snapshotVia, targetBin, trialTimeout, verbTemplates, s3 } from './lib/flags.js';

export const spec = defineVerb({
  name: 'upgrade',
  summary: 'roll the cluster to a new minor version, one member at a time (journalled, resumable)',
  flags: {
    ...cluster,
    ...driver,
    // help and completion read the ladder's table (@opsctl/shared/etcd-ladder: a small module of data, cheap for --help)
    to: {
      type: 'string',
      value: 'minor',
      help: `the target minor version: ${ladderSpan()} (one rolling upgrade per minor), e.g. ${LADDER_TOP}`,
      required: true,
      suggest: LADDER_TARGETS,
    },
    dryRun,
    exitCode: EXIT_CODE_FLAG,
    settle: { type: 'string', value: 'auto|duration', help: 'wait after each member: auto = 2m when v2 data > 50 MB, else none', default: 'auto' },
    backupTo: {
      type: 'string',
      value: 's3://bucket/prefix',
      help: "also upload each snapshot before a stop (each hop's restore point first) there, streamed and verified, before the member stops; write access is proved before anything stops",
    },
    ...s3,
    backup: { type: 'negated', help: 'command driver without a backup template: upgrade without backing up the data dirs (the plan says so)' },
    keepBackups,
    allowSameVersion: { type: 'boolean', help: 'a rolling restart when the members already run --to' },
    targetBin: targetBin('real etcd: the directory with the new etcd binary; per hop of a ladder: 3.4=DIR (repeatable)'),
    strict: { type: 'boolean', help: "refuse to start while any check of the hop's rulebook could not run" },
    fixV2store: {
      type: 'boolean',
      help: "before 3.5 → 3.6: restart each member whose etcdutl check v2store fails once on 3.5 with snapshot-count 1 (the guide's fix; the default where opsctl reaches the data dirs)",
      negate: 'before 3.5 → 3.6: refuse where etcdutl check v2store fails, instead of the fix',
    },
    trialTimeout,
    ignoreCheck: {
      type: 'list',
      value: 'rule',
      repeat: true,
      help: 'show the refusals of this rule (its id in brackets on the plan) as warnings: your own judgement, said on the plan',
    },
    skipTrial: {
      type: 'list',
      value: 'member',
      repeat: true,
      help: 'stop these members without their trial starts (the proof before every stop) where a trial cannot run or refused: needs --skip-reason; said on the plan, kept in the journal and the report',
    },
    skipReason: { type: 'string', value: 'text', help: 'why --skip-trial: kept with it in the journal and the report' },
    rehearse: {
      type: 'boolean',
      help: 'rehearse the whole plan on a clone of the cluster now (every hop and fix, each member stopped and started, under a writer and a /health probe), and change nothing: before the window',
    },
    rehearsalValid: {
      type: 'string',
      value: 'duration',
      help: 'how long a passed --rehearse of the same plan (members, their start settings, the hop binaries) is reused by a run instead of rehearsing again; 0: always again',
      default: '12h',
    },
    rehearsalMaxCopy: {
      type: 'string',
      value: 'size',
      help: "the most the rehearsal's copy may read with every member paused at once (every client waits meanwhile); above it, each member's own trials are the proof; 0: no rehearsal",
      default: '2GiB',
    },
    rehearsalCopyKeys: {
      type: 'boolean',
      help: "members on other hosts with certificates: bring their certificate, key and CA files here for the rehearsal's clone too (removed with it); without it they are not rehearsed, their keys never leaving their hosts",
    },
    // (the rehearsal's own run, inside the clone's namespaces: opsctl runs itself so; never typed by hand)
    rehearsalClone: { type: 'boolean', help: 'run inside a clone made by --rehearse', hidden: true },
    defrag: { type: 'boolean', help: 'defragment each member right before its snapshot (etcd maintenance Defragment); shows the space freed' },
    snapshotVia,
    etcdctl,
    clusterVersionTimeout: { type: 'string', value: 'duration', help: 'how long the cluster version may take to reach --to', default: '2m' },
    snapshotTimeout,
    onFailure: {
      type: 'string',
      value: 'halt|rollback',
      help: 'a member that never becomes healthy on --to: halt there, or put it back on its old binary and data first',
      default: 'halt',
    },
    ...verbTemplates('upgrade'),
    report: {
      type: 'string',
      value: 'file.html',
      home: true,
      help: 'write a one-page HTML report of the run (plan, down windows, health, snapshots); with --json its data too',
    },
  },
  examples: [
    'opsctl kv upgrade --to 3.3 --dry-run',
    'opsctl kv upgrade --to 3.3 --json',
    'opsctl kv upgrade --to 3.3 --report upgrade.html',
    'opsctl kv upgrade --to 3.3 --cluster prod.yaml --settle 2m',
  ],
  load: (): RunModule => import('./upgrade.js'),
});
