import { LADDER } from '@opsctl/shared/etcd-ladder.js';
import { posix } from 'node:path';
import type { CommandTemplates } from '../cluster/cluster-file.js';

/**
 * `driver: {type: systemd, …}` in a cluster file: etcd as a systemd unit on each member's host,
 * reached over ssh. Expands to command-driver templates, so nobody hand-writes them for this
 * common install.
 */
export interface SystemdPreset {
  type: 'systemd';
  /** The unit (default etcd). */
  unit?: string;
  /** Per-version units instead, e.g. {"3.2": "etcd-3.2", "3.3": "etcd-3.3"}. */
  units?: Record<string, string>;
  /**
   * Per-version etcd binaries, e.g. {"3.3": "/opt/etcd-v3.3.27/etcd"}, linked to `binLink` (the path
   * the unit's ExecStart runs) before the unit starts.
   */
  bins?: Record<string, string>;
  binLink?: string;
  /** The ssh program and options (default "ssh"), e.g. "ssh -i ~/.ssh/ops -l admin". */
  ssh?: string;
  /** Prefix privileged commands with sudo (default true). */
  sudo?: boolean;
  /** The member's etcd config file ({version}: the target), for the 3.3 configuration check. */
  configFile?: string;
  /**
   * The member's data dir: a backup after each stop, the v2 size for --settle auto, putting the backup
   * back (--on-failure rollback), and kv restore (the snapshot must be at the same path on each host).
   */
  dataDir?: string;
  /** The etcdctl on the hosts that restores a snapshot onto 3.2-3.4 (default etcdctl, from the PATH). */
  etcdctl?: string;
  /** The etcdutl on the hosts that restores a snapshot onto 3.5 and 3.6 (default etcdutl; 3.6's etcdctl has no snapshot restore). */
  etcdutl?: string;
}

export class PresetError extends Error {}

/** The command templates of a systemd preset (pure: unit-tested). */
export function expandSystemd(p: SystemdPreset): CommandTemplates {
  if (p.unit && p.units) throw new PresetError('give unit or units (per version), not both');
  if (p.bins && !p.binLink)
    throw new PresetError("bins needs binLink: the path the unit's ExecStart runs, which opsctl points at the version's binary before starting");
  const ssh = `${p.ssh ?? 'ssh'} {host}`;
  const sudo = p.sudo === false ? '' : 'sudo ';
  const units = (p.units ? [...new Set(Object.values(p.units))] : [p.unit ?? 'etcd']).map(word);
  const unitOf = (v: string) => word(p.units?.[v] ?? p.unit ?? 'etcd');
  const startOf = (v: string) =>
    `${ssh} ${p.bins?.[v] ? `${sudo}ln -sfn ${word(p.bins[v])} ${word(p.binLink ?? '')} && ` : ''}${sudo}systemctl start ${unitOf(v)}`;
  const versions = [...new Set([...Object.keys(p.units ?? {}), ...Object.keys(p.bins ?? {})])];
  const t: CommandTemplates = {
    // `systemctl stop` returns once the unit's processes are gone.
    stop: `${ssh} ${sudo}systemctl stop ${units.join(' ')}`,
    start: `${ssh} ${sudo}systemctl start ${unitOf('')}`,
    // Exit 0 while any of the units is active.
    running: `${ssh} systemctl is-active --quiet ${units.join(' ')}`,
    // The trial of each hop's binary runs on the host as root (it reads the member's /proc and starts
    // the binary as the member's own user): a shell script on the standard input.
    trial: `${ssh} ${sudo}sh -s`,
  };
  if (p.bins) t.binByVersion = { ...p.bins };
  if (versions.length) t.startByVersion = Object.fromEntries(versions.map((v) => [v, startOf(v)]));
  // Each version's binary is on the hosts already (bins): before a hop's first stop, each host's is
  // checked by its own --version, so a missing or wrong binary refuses with nothing stopped.
  if (p.bins) t.stageByVersion = Object.fromEntries(Object.entries(p.bins).map(([v, bin]) => [v, `${ssh} ${word(bin)} --version`]));
  if (p.configFile) t.config = `${ssh} cat ${word(p.configFile)}`;
  if (p.dataDir) {
    t.dataDir = word(p.dataDir);
    t.onHost = `${ssh}${p.sudo === false ? '' : ' sudo'}`;
    // Each path is one word of the template (quoted for it when it has blanks); a path holding a
    // placeholder is one argument on the host, quoted there by the driver.
    const d = word(p.dataDir);
    const dd = (suffix: string) => word(`${p.dataDir}${suffix}`);
    // --sparse=always: runs of zeros become holes (a WAL segment is 64 MB preallocated from its first record)
    t.backup = `${ssh} ${sudo}cp -a --sparse=always ${d} ${dd('.bak-{run}')}`;
    t.dropBackup = `${ssh} ${sudo}rm -rf ${dd('.bak-{run}')}`;
    // (no v2-size template: `du` of member/snap counts the v3 db there too; the trial template reaches the
    // host, where --settle auto reads the newest v2 snapshot file, else the WAL's v2 writes: host-script.ts)
    // The backup's space (checked before each stop): the data dir's size, then the free space where
    // the backup goes (beside the data dir). POSIX output: `du -sk`, `df -Pk`.
    t.space = `${ssh} ${sudo}du -sk ${d} && df -Pk ${word(posix.dirname(p.dataDir))}`;
    // The remote shell runs these lines (ssh joins its arguments), so `&&` chains on the host.
    t.restoreBackup = `${ssh} ${sudo}mv ${d} ${dd('.failed-{run}')} && ${sudo}cp -a ${dd('.bak-{run}')} ${d}`;
    t.restoreCheck = `${ssh} test -d ${d} && test -f {snapshot}`;
    // etcdctl snapshot restore up to 3.4; etcdutl from 3.5 on, as kv restore --to-version does locally
    // (3.6's etcdctl has no snapshot restore; 3.5's is deprecated). The same flags for both.
    const restoreWith = (tool: string) =>
      `${ssh} ${sudo}mv ${d} ${dd('.before-restore-{run}')} && ${sudo}${tool} snapshot restore {snapshot} ` +
      `--name {name} --initial-cluster {cluster} --initial-cluster-token {token} --initial-advertise-peer-urls {peer} --data-dir ${d} ` +
      `&& ${sudo}chown -R ${word(`--reference=${p.dataDir}.before-restore-{run}`)} ${d}`;
    t.restore = restoreWith(`env ETCDCTL_API=3 ${word(p.etcdctl ?? 'etcdctl')}`);
    const etcdutl = restoreWith(word(p.etcdutl ?? 'etcdutl'));
    // (the minors restored with etcdutl, from the ladder's table: 3.5 on)
    t.restoreByVersion = Object.fromEntries(LADDER.filter((r) => r.restoreTool === 'etcdutl').map((r) => [r.minor, etcdutl]));
  }
  return t;
}

/**
 * A preset's value (a unit, a path) as one word of a template: as it is when plain, else in double
 * quotes (the template grammar's, argv.ts: \" and \\ inside). Placeholders in it stay placeholders.
 */
function word(value: string): string {
  return /^[A-Za-z0-9_@%+=:,./{}-]+$/.test(value) ? value : `"${value.replace(/["\\]/g, '\\$&')}"`;
}
