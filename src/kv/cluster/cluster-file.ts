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
  /** The container driver: the member's container (its name or id; default etcd-NAME). */
  container?: string;
}

/** The verbs that stop and start members: each takes the templates every one of them names as flags (kv/lib/flags.ts `driver`). */
export const CYCLING_VERBS = ['upgrade', 'downgrade', 'restore', 'rollback'] as const;
export type CyclingVerb = (typeof CYCLING_VERBS)[number];

/** One template of the command driver: how the cluster file and the command line name it, and who takes it. */
export interface TemplateRow {
  /** The option of its `--endpoints` flag (`stopCmd` is `--stop-cmd`). */
  readonly flag: string;
  /** The flag's help. */
  readonly help: string;
  /** The verbs whose flags it is. */
  readonly verbs: readonly CyclingVerb[];
  /** The driver needs it (the cluster file's driver and the flags give stop, start and running together). */
  readonly required?: true;
  /** The placeholders it has besides the common ones (kv/templates/argv.ts TEMPLATE_VARS). */
  readonly extra?: readonly string[];
  /** A command run as it is, a path on the host (checked through onHost), or the prefix of other commands. */
  readonly kind: 'command' | 'path' | 'prefix';
  /** Given again in the commands opsctl prints for later (kv rollback, kv restore) and in the rehearsal's own run. */
  readonly carried?: true;
}

const ALL = CYCLING_VERBS;
const RESTORE_VALUES = ['snapshot', 'peer', 'cluster', 'token', 'run'] as const;

/**
 * The command driver's templates, one row each and in --help order: the key is the cluster file's
 * (driver.KEY) and the driver's; the row gives its flag, help, verbs and placeholders. The cluster file's
 * schema, the flags, the flags' reading and {@link CommandTemplates} are made from this table.
 */
export const DRIVER_TEMPLATES = {
  stop: {
    flag: 'stopCmd',
    help: 'with --endpoints: stops a member, e.g. "ssh {host} sudo systemctl stop etcd"',
    verbs: ALL,
    required: true,
    kind: 'command',
    carried: true,
  },
  start: { flag: 'startCmd', help: 'with --endpoints: starts a member on {version}/{bin}', verbs: ALL, required: true, kind: 'command', carried: true },
  /** Exit 0 while the member's process exists (e.g. `ssh {host} systemctl is-active --quiet etcd`). */
  running: {
    flag: 'runningCmd',
    help: "with --endpoints: exits 0 while the member's process exists",
    verbs: ALL,
    required: true,
    kind: 'command',
    carried: true,
  },
  /** Optional: prints the size in bytes of the member's v2 data (for --settle auto). */
  v2Size: { flag: 'v2SizeCmd', help: 'with --endpoints: prints the bytes of v2 data (for --settle auto)', verbs: ALL, kind: 'command', carried: true },
  /**
   * Optional: prints the member's etcd config file (YAML), e.g. `ssh {host} cat /etc/etcd/etcd.conf.yml`,
   * read before the upgrade for the 3.3 configuration check.
   */
  config: {
    flag: 'configCmd',
    help: "with --endpoints: prints the member's etcd config file, checked before a 3.3 upgrade",
    verbs: ALL,
    kind: 'command',
    carried: true,
  },
  /**
   * Optional: prints the settings a start on {version} runs etcd with, where they differ per version (a
   * per-version unit, manifest or flags file): one etcd argument per line (`--key=value`), and `ETCD_*=value`
   * lines for its environment; e.g. `ssh {host} cat /etc/etcd/{version}.args`. The trials and the checks of a
   * hop read these instead of the running process's (which are the version it runs now).
   */
  settings: {
    flag: 'settingsCmd',
    help: 'with --endpoints: prints the etcd arguments (one per line) and ETCD_*= lines a start on {version} uses, where they differ per version',
    verbs: ALL,
    kind: 'command',
    carried: true,
  },
  /**
   * Optional: backs up the stopped member's data dir on its host, e.g.
   * `ssh {host} sudo cp -a /var/lib/etcd /var/lib/etcd.bak-{run}` ({run}: the upgrade's journal id for a member's
   * first copy, `ID.2`, `ID.3` … for each later one: a resume after --on-failure rollback copies into a place of its own).
   */
  backup: {
    flag: 'backupCmd',
    help: "with --endpoints: backs up a stopped member's data dir on its host ({run}: the upgrade id, ID.2 … for a member's later copies)",
    verbs: ALL,
    extra: ['run'],
    kind: 'command',
  },
  /**
   * Optional: stages the hop's target binary on the member's host before the hop's first stop, and
   * prints the staged binary's `etcd --version` ({version}: the hop's minor, {bin}: its directory), e.g.
   * `ssh {host} sudo /usr/local/bin/fetch-etcd {version} && ssh {host} /opt/etcd-{version}/etcd --version`.
   */
  stage: {
    flag: 'stageCmd',
    help: "with --endpoints: stages the hop's binary ({version} {bin}) on each host before the hop's first stop; must print its etcd --version",
    verbs: ALL,
    kind: 'command',
  },
  /**
   * Optional: prints `du -sk DATA_DIR` then `df -Pk BACKUP_DIR` on the member's host, e.g.
   * `ssh {host} sudo du -sk /var/lib/etcd && df -Pk /var/lib`: the backup's space, checked before each stop.
   */
  space: {
    flag: 'spaceCmd',
    help: "with --endpoints: prints `du -sk DATA_DIR` then `df -Pk BACKUP_DIR` on the host: the backup's space, checked before each stop",
    verbs: ALL,
    kind: 'command',
  },
  /**
   * Optional (kv restore): run on a stopped member's host, keeps its data dir under a new name and
   * restores {snapshot} into a fresh one, e.g. `ssh {host} sudo /usr/local/bin/etcd-restore {snapshot}
   * {name} {peer} {cluster} {token} {run}` ({cluster}: name=peerURL,…; {token}: the new cluster token;
   * {run}: a timestamp for the kept dir's name).
   */
  restore: {
    flag: 'restoreCmd',
    help: "with --endpoints: restores {snapshot} on a stopped member's host ({name} {peer} {cluster} {token} {run})",
    verbs: ['restore'],
    extra: RESTORE_VALUES,
    kind: 'command',
  },
  /** Optional (kv restore): exits 0 when the member's host is reachable and its data dir exists (run before any stop). */
  restoreCheck: {
    flag: 'restoreCheckCmd',
    help: 'with --endpoints: exits 0 when the host is reachable and the data dir is there',
    verbs: ['restore'],
    extra: RESTORE_VALUES,
    kind: 'command',
  },
  /**
   * Optional (--on-failure rollback): puts a stopped member's data dir back from the backup template's
   * copy, e.g. `ssh {host} sudo mv /var/lib/etcd /var/lib/etcd.failed-{run} && sudo cp -a /var/lib/etcd.bak-{run} /var/lib/etcd`.
   */
  restoreBackup: {
    flag: 'restoreBackupCmd',
    help: "with --endpoints: puts a stopped member's data dir back from the backup ({run}), for --on-failure rollback",
    verbs: ['upgrade', 'downgrade'],
    extra: ['run'],
    kind: 'command',
  },
  /**
   * Optional: removes the backup template's copy once its hop is done (the hop's verified restore point is
   * then the way back), e.g. `ssh {host} sudo rm -rf /var/lib/etcd.bak-{run}`. Without it the copies stay
   * on the hosts, and the report says where.
   */
  dropBackup: {
    flag: 'dropBackupCmd',
    help: "with --endpoints: removes a member's data-dir copy ({run}) once its hop is done (without it the copies stay on the hosts)",
    verbs: ['upgrade', 'downgrade'],
    extra: ['run'],
    kind: 'command',
  },
  /**
   * Optional: the member's data directory on its host (a path template, e.g. /var/lib/etcd or
   * /srv/etcd/{name}), looked at before a 3.3 upgrade: v2 data without a v3 database makes 3.3 panic.
   */
  dataDir: {
    flag: 'dataDir',
    help: "with --endpoints: the member's data dir on its host, checked before 3.3 (v2 data without a v3 db)",
    verbs: ALL,
    kind: 'path',
    carried: true,
  },
  /** Optional: the prefix that runs a command on the member's host, e.g. `ssh {host}` (none: this machine). */
  onHost: {
    flag: 'onHost',
    help: 'with --endpoints: runs a command on the member\'s host for that check, e.g. "ssh {host} sudo"',
    verbs: ALL,
    kind: 'prefix',
    carried: true,
  },
  /**
   * Optional: runs a POSIX shell script read from its standard input on the member's host, as root,
   * e.g. `ssh {host} sudo sh -s`: the trial start of each hop's binary with the member's own settings
   * (src/kv/trial) before anything stops. Without it the plan says "not checked" for the trial.
   */
  trial: {
    flag: 'trialCmd',
    help: "with --endpoints: runs a shell script from its stdin on the member's host as root, e.g. \"ssh {host} sudo sh -s\": each hop's binary tried with the member's settings before any stop",
    verbs: ALL,
    kind: 'command',
    carried: true,
  },
} as const satisfies Record<string, TemplateRow>;

type Rows = typeof DRIVER_TEMPLATES;
export type TemplateKey = keyof Rows;
/** The templates the driver needs: stop, start, running. */
export type RequiredTemplate = { [K in TemplateKey]: Rows[K] extends { required: true } ? K : never }[TemplateKey];

/** The table's rows as [key, row], in its order. */
export const TEMPLATE_ROWS = Object.entries(DRIVER_TEMPLATES) as ReadonlyArray<[TemplateKey, TemplateRow]>;

type Texts<T> = { -readonly [K in keyof T]: string };

/** The command driver's templates (one per row of {@link DRIVER_TEMPLATES}) and a systemd preset's per-version ones. */
export interface CommandTemplates extends Texts<Pick<Rows, RequiredTemplate>>, Partial<Texts<Omit<Rows, RequiredTemplate>>> {
  /** The stage template per target minor (a systemd preset with bins: each version's binary checked on the host). */
  stageByVersion?: Record<string, string>;
  /** The etcd binary on the hosts per target minor, for the trial (a systemd preset's bins); else {bin}/etcd. */
  binByVersion?: Record<string, string>;
  /** Optional: the start template per target version (a preset's per-version units or binaries). */
  startByVersion?: Record<string, string>;
  /** Per target minor, a settings template instead of `settings` (the systemd preset's per-version units). */
  settingsByVersion?: Record<string, string>;
  /** Per target minor, a restore template instead of `restore` (the systemd preset: etcdutl from 3.5 on). */
  restoreByVersion?: Record<string, string>;
}

/** The cluster file's container driver (kv/containers): members that are podman or docker containers of the etcd image. */
export interface ContainerSpec {
  type: 'container';
  /** podman (default) or docker, or a path to either. */
  engine?: string;
  /** The prefix that runs the engine on the member's host, e.g. `ssh {host} sudo` (none: this machine). */
  onHost?: string;
  /** The etcd image per minor: {"3.6": "registry.example/etcd:v3.6.16"}. */
  images: Record<string, string>;
}

export interface ClusterSpec {
  /** Where it came from, for messages. */
  source: 'sandbox' | 'file' | 'endpoints';
  /** A stable key for journals and snapshots. */
  key: string;
  members: MemberSpec[];
  driver?: { type: 'local' } | ({ type: 'command' } & CommandTemplates) | ContainerSpec;
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

/**
 * What a value reaching a member's command may be (undefined: fine). Each is checked before any
 * command runs, besides being quoted wherever it crosses a shell: a value that cannot be made safe
 * is refused, never run.
 */
export const VALUE_RULES = {
  /** etcd itself accepts any --name; a name used in a command is the common DNS-like one. */
  name: 'a member name used in a command is 1–253 letters, digits, ".", "_" and "-", starting with a letter or digit',
  host: 'a host is a DNS name (letters, digits, "-", "_", dots) or an IP address, optionally after "user@", never starting with "-"',
  path: 'a path has no control characters and does not start with "-"',
  url: 'a URL is http(s)://HOST:PORT with no blanks or control characters',
  id: 'an id is letters, digits, ".", "_", ":" and "-", not starting with "-"',
} as const;

export function memberNameProblem(name: string): string | undefined {
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$/.test(name) ? undefined : VALUE_RULES.name;
}

export function hostProblem(host: string): string | undefined {
  const at = host.lastIndexOf('@');
  const user = at >= 0 ? host.slice(0, at) : undefined;
  const h = at >= 0 ? host.slice(at + 1) : host;
  if (user !== undefined && !/^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$/.test(user)) return VALUE_RULES.host;
  const ipv4 = /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/.test(h);
  const ipv6 = /^\[?[0-9A-Fa-f:.]+\]?$/.test(h) && h.includes(':') && h.startsWith('[') === h.endsWith(']');
  const label = /^[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$/;
  const dns =
    h.length <= 253 &&
    h
      .replace(/\.$/, '')
      .split('.')
      .every((l) => label.test(l));
  return ipv4 || ipv6 || dns ? undefined : VALUE_RULES.host;
}

export function pathProblem(path: string): string | undefined {
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  return path !== '' && !/[\x00-\x1f\x7f]/.test(path) && !path.startsWith('-') ? undefined : VALUE_RULES.path;
}

export function urlProblem(url: string): string | undefined {
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  if (/[\s\x00-\x1f\x7f]/.test(url) || url.startsWith('-')) return VALUE_RULES.url;
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? undefined : VALUE_RULES.url;
  } catch {
    return VALUE_RULES.url;
  }
}

export function idProblem(id: string): string | undefined {
  return /^[A-Za-z0-9._:][A-Za-z0-9._:-]*$/.test(id) ? undefined : VALUE_RULES.id;
}

/** The rule of a placeholder's value: {name}, {host}, URLs, {cluster} (name=URL,…), ids; paths for the rest. */
export function valueProblem(placeholder: string, value: string): string | undefined {
  // No target yet (a stop, a check): {version} and {bin} are empty.
  if (value === '' && (placeholder === 'version' || placeholder === 'bin')) return undefined;
  switch (placeholder) {
    case 'name':
      return memberNameProblem(value);
    case 'host':
      return hostProblem(value);
    case 'endpoint':
    case 'peer':
      return urlProblem(value);
    case 'cluster':
      for (const item of value.split(',')) {
        const eq = item.indexOf('=');
        const p = eq < 0 ? VALUE_RULES.name : (memberNameProblem(item.slice(0, eq)) ?? urlProblem(item.slice(eq + 1)));
        if (p) return `each name=URL of the initial cluster: ${p}`;
      }
      return undefined;
    case 'version':
    case 'run':
    case 'token':
      return idProblem(value);
    default:
      return value === '' ? undefined : pathProblem(value);
  }
}
