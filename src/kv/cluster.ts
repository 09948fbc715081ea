/** Where the members are and how to control them: the sandbox, a cluster file, or --endpoints. */
export interface MemberSpec {
  name: string;
  /** Client URL, e.g. http://127.0.0.1:2379 */
  endpoint: string;
  /** For the command driver: substituted as {host}. */
  host?: string;
  /** Local driver; kv restore (a cluster file may give it, else the cluster's member list). */
  peerUrl?: string;
  dataDir?: string;
  pidFile?: string;
  logFile?: string;
  /** Sandbox: the member's etcd config file (YAML, etcd --config-file) it starts from. */
  configFile?: string;
  /** Simulated member: the minor version it runs ("3.2"). */
  version?: string;
  /** Real etcd: the directory holding the `etcd` binary it runs. */
  binDir?: string;
}

export interface CommandTemplates {
  stop: string;
  start: string;
  /** Exit 0 while the member's process exists (e.g. `ssh {host} systemctl is-active --quiet etcd`). */
  running: string;
  /** Optional: prints the size in bytes of the member's v2 data (for --settle auto). */
  v2Size?: string;
  /**
   * Optional: backs up the stopped member's data dir on its host, e.g.
   * `ssh {host} sudo cp -a /var/lib/etcd /var/lib/etcd.bak-{run}` ({run}: the upgrade's journal id).
   */
  backup?: string;
  /**
   * Optional: prints the member's etcd config file (YAML), e.g. `ssh {host} cat /etc/etcd/etcd.conf.yml`,
   * read before the upgrade for the 3.3 configuration check.
   */
  config?: string;
  /**
   * Optional (kv restore): run on a stopped member's host, keeps its data dir under a new name and
   * restores {snapshot} into a fresh one, e.g. `ssh {host} sudo /usr/local/bin/etcd-restore {snapshot}
   * {name} {peer} {cluster} {token} {run}` ({cluster}: name=peerURL,…; {token}: the new cluster token;
   * {run}: a timestamp for the kept dir's name).
   */
  restore?: string;
  /**
   * Optional (--on-failure rollback): puts a stopped member's data dir back from the backup template's
   * copy, e.g. `ssh {host} sudo mv /var/lib/etcd /var/lib/etcd.failed-{run} && sudo cp -a /var/lib/etcd.bak-{run} /var/lib/etcd`.
   */
  restoreBackup?: string;
  /** Optional (kv restore): exits 0 when the member's host is reachable and its data dir exists (run before any stop). */
  restoreCheck?: string;
  /**
   * Optional: the member's data directory on its host (a path template, e.g. /var/lib/etcd or
   * /srv/etcd/{name}), looked at before a 3.3 upgrade: v2 data without a v3 database makes 3.3 panic.
   */
  dataDir?: string;
  /** Optional: the prefix that runs a command on the member's host, e.g. `ssh {host}` (none: this machine). */
  onHost?: string;
  /** Optional: the start template per target version (a preset's per-version units or binaries). */
  startByVersion?: Record<string, string>;
}

export interface ClusterSpec {
  /** Where it came from, for messages. */
  source: 'sandbox' | 'file' | 'endpoints';
  /** A stable key for journals and snapshots. */
  key: string;
  members: MemberSpec[];
  driver?: { type: 'local' } | ({ type: 'command' } & CommandTemplates);
  /** Sandbox only. */
  sandbox?: SandboxSpec;
}

export interface SandboxSpec {
  kind: 'sim' | 'etcd';
  dir: string;
  token: string;
  heartbeatMs: number;
  members: MemberSpec[];
  createdAt: string;
}
