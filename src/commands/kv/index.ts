import { Option, type Command } from 'commander';
import type { Context } from '../../context.js';
import { CONFIRM_HELP, examples, lazyAction } from '../action.js';
import { NOUN_SUMMARIES } from '../nouns.js';
import { suggest } from '../suggest.js';

/** Flags that find the cluster (every kv verb but sandbox). */
function clusterOptions(cmd: Command, withDriver = false): Command {
  cmd
    .option('--endpoints <urls>', 'client URLs, comma-separated (default: the sandbox)')
    .option('--cluster <file>', 'a cluster file (YAML or JSON): members and a driver')
    .option('--request-timeout <duration>', 'timeout of one request to a member', '3s')
    .option('--cacert <file>', "TLS: the CA bundle that signed the members' certificates (env OPSCTL_KV_CACERT)")
    .option('--cert <file>', 'TLS: client certificate (env OPSCTL_KV_CERT)')
    .option('--key <file>', 'TLS: client key (env OPSCTL_KV_KEY)')
    .option('--insecure-skip-tls-verify', "TLS: do not check the members' certificates (warned about)")
    .option('--user <name>', 'etcd auth: the user; the password from the prompt, OPSCTL_KV_PASSWORD or --password-file')
    .option('--password-file <file>', 'etcd auth: a file whose first line is the password');
  if (withDriver) {
    cmd
      .option('--stop-cmd <template>', 'with --endpoints: stops a member, e.g. "ssh {host} sudo systemctl stop etcd"')
      .option('--start-cmd <template>', 'with --endpoints: starts a member on {version}/{bin}')
      .option('--running-cmd <template>', "with --endpoints: exits 0 while the member's process exists")
      .option('--v2-size-cmd <template>', 'with --endpoints: prints the bytes of v2 data (for --settle auto)')
      .option('--config-cmd <template>', "with --endpoints: prints the member's etcd config file, checked before a 3.3 upgrade")
      .option('--backup-cmd <template>', "with --endpoints: backs up a stopped member's data dir on its host ({run}: the upgrade id)")
      .option(
        '--stage-cmd <template>',
        "with --endpoints: stages the hop's binary ({version} {bin}) on each host before the hop's first stop; must print its etcd --version",
      )
      .option(
        '--space-cmd <template>',
        "with --endpoints: prints `du -sk DATA_DIR` then `df -Pk BACKUP_DIR` on the host: the backup's space, checked before each stop",
      )
      .option('--data-dir <template>', "with --endpoints: the member's data dir on its host, checked before 3.3 (v2 data without a v3 db)")
      .option('--on-host <template>', 'with --endpoints: runs a command on the member\'s host for that check, e.g. "ssh {host} sudo"')
      .option('--stop-timeout <duration>', 'how long a stopping member may take', '60s')
      .option('--healthy-timeout <duration>', 'how long a started member may take to be healthy and caught up', '2m')
      .option('--poll-interval <duration>', 'between health polls', '250ms');
  }
  return cmd;
}

/** `opsctl kv …`: health, versions, snapshots, gateway put/get, the sandbox, and the rolling upgrade. */
export function register(program: Command, ctx: Context): void {
  const kv = program.command('kv').description(NOUN_SUMMARIES.kv);
  examples(
    kv,
    'opsctl kv sandbox up --members 3 --version 3.2',
    'opsctl kv upgrade --to 3.3 --dry-run',
    'opsctl kv upgrade --to 3.3',
    'opsctl kv health --endpoints http://10.0.0.1:2379,http://10.0.0.2:2379',
  );

  const upgrade = clusterOptions(
    kv.command('upgrade').description('roll the cluster to a new minor version, one member at a time (journalled, resumable)'),
    true,
  )
    // completion offers the ladder's targets (kv/ladder-plan.ts LADDER_MINORS above 3.2; not loaded for --help)
    .addOption(
      suggest(new Option('--to <minor>', 'the target minor version: 3.3 to 3.6 (one rolling upgrade per minor), e.g. 3.6').makeOptionMandatory(), [
        '3.3',
        '3.4',
        '3.5',
        '3.6',
      ]),
    )
    .option('--dry-run', 'print the plan and stop')
    .option('--settle <auto|duration>', 'wait after each member: auto = 2m when v2 data > 50 MB, else none', 'auto')
    .option('--no-backup', 'command driver without a backup template: upgrade without backing up the data dirs (the plan says so)')
    .option('--allow-same-version', 'a rolling restart when the members already run --to')
    .option(
      '--target-bin <[version=]dir>',
      'real etcd: the directory with the new etcd binary; per hop of a ladder: 3.4=DIR (repeatable)',
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .option('--strict', "refuse to start while any check of the hop's rulebook could not run")
    .option('--fix-v2store', "before 3.5 → 3.6: restart each member whose etcdutl check v2store fails once on 3.5 with snapshot-count 1 (the guide's fix)")
    .option('--defrag', 'defragment each member right before its snapshot (etcd maintenance Defragment); shows the space freed')
    .option('--snapshot-via <how>', 'auto | etcdctl | gateway', 'auto')
    .option('--etcdctl <path>', 'the etcdctl to use for snapshots')
    .option('--cluster-version-timeout <duration>', 'how long the cluster version may take to reach --to', '2m')
    .option('--snapshot-timeout <duration>', 'timeout of one snapshot', '2m')
    .option('--on-failure <halt|rollback>', 'a member that never becomes healthy on --to: halt there, or put it back on its old binary and data first', 'halt')
    .option('--restore-backup-cmd <template>', "with --endpoints: puts a stopped member's data dir back from the backup ({run}), for --on-failure rollback")
    .option('--report <file.html>', 'write a one-page HTML report of the run (plan, down windows, health, snapshots); with --json its data too')
    .action(lazyAction(ctx, () => import('./upgrade.js')));
  examples(
    upgrade,
    'opsctl kv upgrade --to 3.3 --dry-run',
    'opsctl kv upgrade --to 3.3 --json',
    'opsctl kv upgrade --to 3.3 --report upgrade.html',
    'opsctl kv upgrade --to 3.3 --cluster prod.yaml --settle 2m',
  );

  const downgrade = clusterOptions(
    kv.command('downgrade').description("take a 3.6 cluster back to 3.5 with etcd's downgrade API, one member at a time (journalled, resumable)"),
    true,
  )
    .addOption(suggest(new Option('--to <minor>', 'the target minor: the previous one (3.5 for a 3.6 cluster)').makeOptionMandatory(), ['3.5']))
    .option('--dry-run', 'print the plan and stop')
    .option('--settle <auto|duration>', 'wait after each member: auto = measured catch-up', 'auto')
    .option('--no-backup', 'command driver without a backup template: downgrade without backing up the data dirs')
    .option('--target-bin <[version=]dir>', 'real etcd: the directory with the 3.5 etcd binary (3.5=DIR)', (v: string, prev: string[] = []) => [...prev, v])
    .option('--snapshot-via <how>', 'auto | etcdctl | gateway', 'auto')
    .option('--etcdctl <path>', 'the etcdctl to use for snapshots')
    .option('--cluster-version-timeout <duration>', 'how long the cluster version may take to drop to --to, and the downgrade to end', '2m')
    .option('--snapshot-timeout <duration>', 'timeout of one snapshot', '2m')
    .option('--on-failure <halt|rollback>', 'a member that never becomes healthy on --to: halt there, or put it back on 3.6 first', 'halt')
    .option('--restore-backup-cmd <template>', "with --endpoints: puts a stopped member's data dir back from the backup ({run}), for --on-failure rollback")
    .action(lazyAction(ctx, () => import('./downgrade.js')));
  examples(
    downgrade,
    'opsctl kv downgrade --to 3.5 --dry-run',
    'opsctl kv downgrade --to 3.5 --target-bin 3.5=/opt/etcd-3.5',
    'opsctl kv downgrade --to 3.5 --json',
  );

  const rollback = clusterOptions(
    kv.command('rollback').description('restart upgraded members on their previous version (only while the cluster version has not moved)'),
    true,
  );
  rollback.option('--dry-run', 'print which members it would bring back, and change nothing');
  rollback.action(lazyAction(ctx, () => import('./rollback.js')));
  examples(rollback, 'opsctl kv rollback --dry-run', 'opsctl kv rollback', 'opsctl kv rollback --cluster prod.yaml --json');
  const restore = clusterOptions(
    kv.command('restore').description('rebuild every member from a verified snapshot (old data dirs kept): the way back after the cluster version moved'),
    true,
  )
    .option('--snapshot <file>', "the snapshot to restore (kv status names the last upgrade's restore point)")
    .option('--from-hop <minor>', "instead of --snapshot: the restore point taken before the upgrade's hop off this minor (e.g. 3.3), restored on it")
    .option('--to-version <minor>', 'start the members on this version (default: the version the last upgrade started from)')
    .option('--target-bin <dir>', 'real etcd: the release directory to start (its etcdutl, before 3.5 its etcdctl, restores the data)')
    .option('--restore-cmd <template>', "with --endpoints: restores {snapshot} on a stopped member's host ({name} {peer} {cluster} {token} {run})")
    .option('--restore-check-cmd <template>', 'with --endpoints: exits 0 when the host is reachable and the data dir is there')
    .option('--dry-run', 'check everything and print the plan; change nothing')
    .action(lazyAction(ctx, () => import('./restore.js')));
  examples(
    restore,
    'opsctl kv restore --snapshot backup.db --dry-run',
    'opsctl kv restore --snapshot backup.db --to-version 3.2 --yes',
    'opsctl kv restore --from-hop 3.4 --dry-run',
    'opsctl kv restore --cluster prod.yaml --snapshot /var/backups/etcd.db --to-version 3.2',
  );
  const health = clusterOptions(kv.command('health').description('/health of every member'));
  health.action(lazyAction(ctx, () => import('./health.js')));
  examples(health, 'opsctl kv health', 'opsctl kv health --endpoints http://10.0.0.1:2379,http://10.0.0.2:2379 --json');
  const version = clusterOptions(kv.command('version').description('server and cluster version of every member'));
  version.action(lazyAction(ctx, () => import('./version.js')));
  examples(version, 'opsctl kv version', 'opsctl kv version --json');
  const status = clusterOptions(kv.command('status').description('id, versions, leader, revision and health of every member'));
  status.option('--report <file.html>', "instead: write the last upgrade's HTML report from its journal (with --json, print its data)");
  status.action(lazyAction(ctx, () => import('./status.js')));
  examples(status, 'opsctl kv status', 'opsctl kv status --json=id,leader,revision', 'opsctl kv status --report upgrade.html');
  const put = clusterOptions(
    kv.command('put <key> [value]').description('write a key through the JSON gateway (the value as an argument, - for stdin, or --file)'),
  ).option('--file <path>', 'the value is the content of this file (- for stdin)');
  put.action(
    lazyAction(
      ctx,
      () => import('./put.js'),
      ([kvKey, value]: [string, string | undefined], o) => ({ ...o, kvKey, value }),
    ),
  );
  examples(put, 'opsctl kv put config/mode maintenance', 'opsctl kv put config/tls.pem --file ./tls.pem', 'generate-config | opsctl kv put config/app -');
  const get = clusterOptions(kv.command('get <key>').description('read a key through the JSON gateway'));
  get.action(
    lazyAction(
      ctx,
      () => import('./get.js'),
      ([kvKey]: [string], o) => ({ ...o, kvKey }),
    ),
  );
  examples(get, 'opsctl kv get config/mode', 'opsctl kv get config/mode --json');

  const snapshot = kv.command('snapshot').description('v3 snapshots');
  const save = clusterOptions(snapshot.command('save <file>').description('save a verified snapshot from one member'))
    .option('--endpoint <url>', 'the member to take it from (default: the first healthy one)')
    .option('--via <how>', 'auto | etcdctl | gateway', 'auto')
    .option('--etcdctl <path>', 'the etcdctl to use')
    .option('--snapshot-timeout <duration>', 'timeout', '2m')
    .option('--force', 'overwrite FILE if it exists (its directory must exist)')
    .action(
      lazyAction(
        ctx,
        () => import('./snapshot-save.js'),
        ([file]: [string], o) => ({ ...o, file }),
      ),
    );
  examples(save, 'opsctl kv snapshot save backup.db', 'opsctl kv snapshot save backup.db --force');
  const snapStatus = snapshot
    .command('status <file>')
    .description('hash, revision, total keys and size of a snapshot file (its SHA-256 trailer checked)')
    .option('--etcdctl <path>', "cross-check with this etcdctl's snapshot status (or the etcdutl beside it); default: the one installed, if any")
    .option('--no-etcdctl', 'no cross-check with etcdctl/etcdutl (the page walk only)')
    .action(
      lazyAction(
        ctx,
        () => import('./snapshot-status.js'),
        ([file]: [string], o) => ({ ...o, file }),
      ),
    );
  examples(snapStatus, 'opsctl kv snapshot status backup.db', 'opsctl kv snapshot status backup.db --json');

  const sandbox = kv.command('sandbox').description('a local cluster on loopback, the default cluster of the kv commands');
  const up = sandbox
    .command('up')
    .description('start a local cluster (simulated 3.2/3.3 members, or real etcd from --etcd-bin)')
    .option('--members <n>', 'how many members', '3')
    .option('--version <minor>', 'simulated members: 3.2 or 3.3 (default 3.2)')
    .addOption(new Option('--kv-version <minor>', 'the same as --version').hideHelp())
    .option('--etcd-bin <dir>', 'run real etcd from this directory instead')
    .option('--heartbeat <duration>', 'heartbeat interval of the members')
    .option('--timeout <duration>', 'how long the members may take to be healthy', '60s')
    .option(
      '--config <[member:]key=value>',
      "a setting in the members' etcd config files (YAML value; repeatable), e.g. auto-compaction-retention=1 or kv2:max-request-bytes=1048576",
      (v: string, prev: string[] = []) => [...prev, v],
    )
    .action(
      lazyAction(
        ctx,
        () => import('./sandbox-up.js'),
        (_a, o) => ({ ...o, version: o.version ?? (typeof o.kvVersion === 'string' ? o.kvVersion : undefined) }),
      ),
    );
  examples(
    up,
    'opsctl kv sandbox up --members 3 --version 3.2',
    'opsctl kv sandbox up --etcd-bin /usr/bin',
    'opsctl kv sandbox up --config auto-compaction-mode=periodic --config \'auto-compaction-retention="24h"\'',
  );
  const sbStatus = sandbox.command('status').description('PIDs, health and versions of the sandbox members');
  sbStatus.action(
    lazyAction(
      ctx,
      () => import('./sandbox-status.js'),
      () => ({}),
    ),
  );
  examples(sbStatus, 'opsctl kv sandbox status', 'opsctl kv sandbox status --json');
  const down = sandbox
    .command('down')
    .description('stop the sandbox members (by PID) and remove their data')
    .option('--keep', 'keep the data dirs')
    .action(lazyAction(ctx, () => import('./sandbox-down.js')));
  examples(down, 'opsctl kv sandbox down', 'opsctl kv sandbox down --keep');

  const release = kv.command('release').description('official etcd release archives, verified (SHA256SUMS, etcd --version) and cached for kv upgrade');
  const relGet = release
    .command('get <version>')
    .description("download etcd-vVERSION-linux-<arch>.tar.gz, check it against the release's SHA256SUMS and its etcd --version, and cache it")
    .option(
      '--from <url>',
      'a mirror laid out like the official downloads (URL/vVERSION/{archive,SHA256SUMS})',
      'https://github.com/etcd-io/etcd/releases/download',
    )
    .option('--cache <dir>', "the release cache (default: opsctl's data directory, cache/etcd-releases)")
    .action(
      lazyAction(
        ctx,
        () => import('./release-get.js'),
        ([version]: [string], o) => ({ ...o, version }),
      ),
    );
  examples(relGet, 'opsctl kv release get 3.5.21', 'opsctl kv release get 3.6.5 --json', 'opsctl kv release get 3.4.37 --from https://mirror.example/etcd');
  const relList = release
    .command('list')
    .description('the releases in the cache')
    .option('--cache <dir>', "the release cache (default: opsctl's data directory, cache/etcd-releases)")
    .action(lazyAction(ctx, () => import('./release-list.js')));
  examples(relList, 'opsctl kv release list', 'opsctl kv release list --json');

  const backups = kv.command('backups').description("the data-dir backups, snapshots and kept data dirs of opsctl's upgrades and restores on this machine");
  const bList = backups
    .command('list')
    .description('every backup by run (upgrade or restore): kind, member, size, date, path, and the journal that records it')
    .action(
      lazyAction(
        ctx,
        () => import('./backups-list.js'),
        () => ({}),
      ),
    );
  examples(bList, 'opsctl kv backups list', 'opsctl kv backups list --json');
  const bPrune = backups
    .command('prune')
    .description(`keep the newest runs' backups of each cluster, remove the rest (never those an upgrade in progress needs); ${CONFIRM_HELP}`)
    .option('--keep <n>', 'how many runs to keep per cluster', '1')
    .option('--dry-run', 'show what would be removed, and remove nothing')
    .action(lazyAction(ctx, () => import('./backups-prune.js')));
  examples(bPrune, 'opsctl kv backups prune --dry-run', 'opsctl kv backups prune --keep 2 --yes');
}
