import type { CommandTemplates } from '../cluster.js';

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
  /** The etcdctl on the hosts that restores a snapshot (default etcdctl, from the PATH). */
  etcdctl?: string;
}

export class PresetError extends Error {}

/** The command templates of a systemd preset (pure: unit-tested). */
export function expandSystemd(p: SystemdPreset): CommandTemplates {
  if (p.unit && p.units) throw new PresetError('give unit or units (per version), not both');
  if (p.bins && !p.binLink)
    throw new PresetError("bins needs binLink: the path the unit's ExecStart runs, which opsctl points at the version's binary before starting");
  const ssh = `${p.ssh ?? 'ssh'} {host}`;
  const sudo = p.sudo === false ? '' : 'sudo ';
  const units = p.units ? [...new Set(Object.values(p.units))] : [p.unit ?? 'etcd'];
  const unitOf = (v: string) => p.units?.[v] ?? p.unit ?? 'etcd';
  const startOf = (v: string) => `${ssh} ${p.bins?.[v] ? `${sudo}ln -sfn ${p.bins[v]} ${p.binLink} && ` : ''}${sudo}systemctl start ${unitOf(v)}`;
  const versions = [...new Set([...Object.keys(p.units ?? {}), ...Object.keys(p.bins ?? {})])];
  const t: CommandTemplates = {
    // `systemctl stop` returns once the unit's processes are gone.
    stop: `${ssh} ${sudo}systemctl stop ${units.join(' ')}`,
    start: `${ssh} ${sudo}systemctl start ${unitOf('')}`,
    // Exit 0 while any of the units is active.
    running: `${ssh} systemctl is-active --quiet ${units.join(' ')}`,
  };
  if (versions.length) t.startByVersion = Object.fromEntries(versions.map((v) => [v, startOf(v)]));
  if (p.configFile) t.config = `${ssh} cat ${p.configFile}`;
  if (p.dataDir) {
    t.dataDir = p.dataDir;
    t.onHost = `${ssh}${p.sudo === false ? '' : ' sudo'}`;
    t.backup = `${ssh} ${sudo}cp -a ${p.dataDir} ${p.dataDir}.bak-{run}`;
    t.v2Size = `${ssh} ${sudo}du -sb ${p.dataDir}/member/snap`;
    const d = p.dataDir;
    // The remote shell runs these lines (ssh joins its arguments), so `&&` chains on the host.
    t.restoreBackup = `${ssh} ${sudo}mv ${d} ${d}.failed-{run} && ${sudo}cp -a ${d}.bak-{run} ${d}`;
    t.restoreCheck = `${ssh} test -d ${d} && test -f {snapshot}`;
    t.restore =
      `${ssh} ${sudo}mv ${d} ${d}.before-restore-{run} && ${sudo}env ETCDCTL_API=3 ${p.etcdctl ?? 'etcdctl'} snapshot restore {snapshot} ` +
      `--name {name} --initial-cluster {cluster} --initial-cluster-token {token} --initial-advertise-peer-urls {peer} --data-dir ${d} ` +
      `&& ${sudo}chown -R --reference=${d}.before-restore-{run} ${d}`;
  }
  return t;
}
