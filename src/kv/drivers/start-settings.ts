import { parseYaml } from '../../core/yaml.js';
import { parseUnit, unitEnvFile, unitStart } from './systemd.js';
/**
 * What a flow may do with the members' program, answered by the driver that runs it (MemberDriver.capabilities,
 * or StartSettings.capabilities for one found running): no flow asks which driver, sandbox or program it is.
 * Absent: etcd's answers (ETCD_PROGRAM). The sandbox's simulated members answer for themselves (kv/sandbox/members.ts).
 */
export interface ProgramCapabilities {
  /**
   * The members keep etcd's files (data dir, WAL, v3 db, v2 snapshots): a check, a trial, a clone or a
   * measure reads them. False: the program keeps its state its own way, and each such step does not apply.
   */
  readonly etcdData: boolean;
  /** A start's binary is asked its version before it runs. False: the program runs the version it is told. */
  readonly askVersion: boolean;
  /** The release a start on each minor it runs runs with no binary given (none to give, fetch, stage or ask); absent: a binary is needed. */
  readonly releases?: Readonly<Record<string, string>>;
  /** What the members are, in plans and messages ("etcd", "simulated"): words to say, never a branch. */
  readonly what: string;
}

/** etcd's answers: its data on disk, its binary asked, a binary needed for every version. */
export const ETCD_PROGRAM: ProgramCapabilities = { etcdData: true, askVersion: true, what: 'etcd' };

/** The capabilities of a driver's members, or of a member's start settings (etcd's where none are given). */
export function capabilitiesOf(of: { readonly capabilities?: ProgramCapabilities } | undefined): ProgramCapabilities {
  return of?.capabilities ?? ETCD_PROGRAM;
}

/**
 * What a member's next start runs with, as the driver knows it: the program, the arguments after it,
 * the ETCD_* environment and the config file they name; and how flags and variables are read. The
 * trial (kv/trial) starts the hop's target with exactly these, rewritten only where a second copy of
 * the member must not collide with the first; the rules (kv/rules) read the same settings as a list.
 */
export interface StartSettings {
  /** The program that runs the target: the etcd binary, or node and the simulated member with its version. */
  program: string[];
  /** The arguments after the program, as the start passes them. */
  args: string[];
  /** ETCD_* variables (and the Go runtime's GO*) of the start's environment. */
  env: Record<string, string>;
  /** The config file the start names (--config-file or ETCD_CONFIG_FILE), read. */
  config?: { file: string; text: string };
  /** The start's working directory (relative paths in the settings are read from it). */
  cwd?: string;
  /** The user the member runs as, when known (a trial run as root runs as this user where it can). */
  user?: { uid: number; gid: number };
  /** What a flow may do with the program started (or found running), where it is not etcd: the driver's answers (driver.ts). */
  capabilities?: ProgramCapabilities;
  /** Where the arguments and the environment were read: "the sandbox's start command", "pid 4242 on 10.0.0.5 (/proc)". */
  from: { args: string; env: string };
  /** Why the target's program is not known (the settings were read, for the rules; the trial cannot run): `program` is empty then. */
  noProgram?: string;
}

/** A flag as written: `--key=value`, `--key value`, `-key value` (Go's flag package takes one dash too), or a bare `--key`. */
export interface FlagWord {
  key: string;
  value: string | true;
  /** Index of the flag's word in the arguments; the value's word follows when `joined` is false. */
  at: number;
  joined: boolean;
}

/**
 * The flags of an argument list. Go flags take their value after `=` or as the next word, so a word
 * that does not start with `-` after a flag is its value (etcd takes no positional arguments: a bool
 * flag is written `--flag` or `--flag=true`).
 */
export function flagWords(args: readonly string[]): FlagWord[] {
  const out: FlagWord[] = [];
  for (let i = 0; i < args.length; i++) {
    const m = /^--?([A-Za-z0-9][A-Za-z0-9-]*)(?:=([\s\S]*))?$/.exec(args[i]!);
    if (!m) continue;
    const key = m[1]!;
    if (m[2] !== undefined) {
      out.push({ key, value: m[2], at: i, joined: true });
      continue;
    }
    const next = args[i + 1];
    if (next !== undefined && !next.startsWith('-')) {
      out.push({ key, value: next, at: i, joined: false });
      i++;
    } else out.push({ key, value: true, at: i, joined: true });
  }
  return out;
}

/** An ETCD_* variable's flag name (ETCD_LOG_OUTPUTS → log-outputs); undefined for other variables. */
export function envKey(variable: string): string | undefined {
  const m = /^ETCD_([A-Z0-9_]+)$/.exec(variable);
  return m ? m[1]!.toLowerCase().replace(/_/g, '-') : undefined;
}

/** The variable that sets a flag (log-outputs → ETCD_LOG_OUTPUTS). */
export function envName(key: string): string {
  return `ETCD_${key.toUpperCase().replace(/-/g, '_')}`;
}

/** The config file a start names: --config-file (a flag wins, as etcd reads it first), else ETCD_CONFIG_FILE. */
export function configFileOf(args: readonly string[], vars: Readonly<Record<string, string>>): string | undefined {
  const flag = flagWords(args).find((f) => f.key === 'config-file');
  if (flag && typeof flag.value === 'string') return flag.value;
  return vars[envName('config-file')] || undefined;
}

/**
 * The data dir (and WAL dir) a member runs with, as etcd reads its settings: the config file when it
 * names one (etcd then ignores flags), else the flag, else ETCD_DATA_DIR, else `NAME.etcd` (etcd's
 * default) in its working directory. Relative paths are read from that directory.
 */
export async function dataDirOf(s: StartSettings): Promise<{ dataDir: string; walDir?: string } | undefined> {
  const from = (key: string): string | undefined => {
    const f = flagWords(s.args).find((x) => x.key === key);
    if (f && typeof f.value === 'string') return f.value;
    return s.env[envName(key)] || undefined;
  };
  let get = from;
  if (s.config) {
    let doc: unknown;
    try {
      doc = await parseYaml(s.config.text);
    } catch {
      return undefined;
    }
    const map = doc && typeof doc === 'object' && !Array.isArray(doc) ? (doc as Record<string, unknown>) : {};
    get = (key) => (typeof map[key] === 'string' && map[key] ? map[key] : undefined);
  }
  const name = get('name') ?? 'default';
  const abs = (p: string) => (p.startsWith('/') || !s.cwd ? p : `${s.cwd.replace(/\/$/, '')}/${p}`);
  const dataDir = abs(get('data-dir') ?? `${name}.etcd`);
  const wal = get('wal-dir');
  return { dataDir, ...(wal ? { walDir: abs(wal) } : {}) };
}

/**
 * A start's own WAL dir (wal-dir), read at once where a caller cannot wait for dataDirOf's YAML parser (the
 * rehearsal's clone is planned synchronously): for the sandbox's config files, which opsctl writes itself as
 * `key: value` lines (kv/sandbox memberConfigText), the key's line; else the flag, else ETCD_WAL_DIR.
 */
export function walDirNow(s: StartSettings): string | undefined {
  const f = flagWords(s.args).find((x) => x.key === 'wal-dir');
  const raw = s.config
    ? /^wal-dir:[ \t]*(\S(?:.*\S)?)[ \t]*$/m.exec(s.config.text)?.[1]?.replace(/^(['"])(.*)\1$/, '$2')
    : typeof f?.value === 'string'
      ? f.value
      : s.env[envName('wal-dir')];
  if (!raw) return undefined;
  return raw.startsWith('/') || !s.cwd ? raw : `${s.cwd.replace(/\/$/, '')}/${raw}`;
}

/** A file read on the member's host for a settings template's output: its text, or why it could not be read (`missing`: it is not there). */
export type HostFileRead = (file: string) => Promise<{ text: string } | { why: string; missing: boolean }>;

/**
 * A settings template's output (`shown` names it): one etcd argument per line, `ETCD_*=value` lines (blank and #
 * lines skipped); or a service unit as `systemctl cat UNIT` prints it (a `[Service]` section: its ExecStart= and
 * environment, systemd.ts), whose EnvironmentFile= files are read on the member's host (`read`).
 */
export async function settingsOutput(
  stdout: string,
  shown: string,
  read: HostFileRead,
): Promise<Pick<StartSettings, 'args' | 'env' | 'from' | 'cwd'> | { why: string }> {
  if (/^\s*\[Service\]\s*$/m.test(stdout)) return unitSettings(stdout, shown, read);
  const args: string[] = [];
  const env: Record<string, string> = {};
  for (const line of stdout.split('\n')) {
    const word = line.replace(/\r$/, '');
    if (!word.trim() || word.trimStart().startsWith('#')) continue;
    const v = /^(ETCD_[A-Z0-9_]+|GO[A-Z0-9_]+)=(.*)$/.exec(word);
    if (v) env[v[1]!] = v[2]!;
    else if (word.startsWith('-')) args.push(word);
    else
      return {
        why: `${shown} printed ${JSON.stringify(word)}: each line is one etcd argument (--key=value) or ETCD_*=value, or the output is a service unit (systemctl cat)`,
      };
  }
  if (!args.length && !Object.keys(env).length) return { why: `${shown} printed no argument and no ETCD_* line` };
  return { args, env, from: { args: shown, env: shown } };
}

/** A service unit's start (systemd.ts parseUnit), its environment files read where it runs. */
async function unitSettings(text: string, shown: string, read: HostFileRead): Promise<Pick<StartSettings, 'args' | 'env' | 'from' | 'cwd'> | { why: string }> {
  const u = parseUnit(text);
  if ('why' in u) return { why: `${shown} printed a service unit opsctl cannot read: ${u.why}` };
  const files: Array<Record<string, string>> = [];
  for (const f of u.envFiles) {
    const r = await read(f.path);
    if ('text' in r) files.push(unitEnvFile(r.text));
    else if (!(f.optional && r.missing)) return { why: `${shown} names EnvironmentFile=${f.path}, which cannot be read on the member's host: ${r.why}` };
  }
  const files$ = u.envFiles.length ? ` with ${u.envFiles.map((f) => f.path).join(', ')}` : '';
  return { ...unitStart(u, files), ...(u.cwd ? { cwd: u.cwd } : {}), from: { args: `${shown}: ExecStart=`, env: `${shown}: its environment${files$}` } };
}
