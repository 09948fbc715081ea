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
  // What a start on each version runs: the unit it starts, read from its files (parseUnit), not the process running now.
  t.settings = `${ssh} systemctl cat ${unitOf('')}`;
  if (p.units) t.settingsByVersion = Object.fromEntries(Object.keys(p.units).map((v) => [v, `${ssh} systemctl cat ${unitOf(v)}`]));
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

/** What a service unit starts, read from its files (`systemctl cat UNIT`: the unit, then its drop-ins). */
export interface UnitStart {
  /** ExecStart's program (the path after its prefixes). */
  program: string;
  /** Its arguments as written: unitStart expands ${VAR} and $VAR once the EnvironmentFile= files are read. */
  words: string[];
  /** False where ExecStart= has the `:` prefix (systemd expands no variable then). */
  expand: boolean;
  /** Environment= of the unit, in order (EnvironmentFile= entries override them once read: unitEnvFile). */
  env: Record<string, string>;
  /** EnvironmentFile= paths, in order; `optional` where written with a leading `-` (a missing file is no error). */
  envFiles: Array<{ path: string; optional: boolean }>;
  /** WorkingDirectory=, where set (a leading `-` dropped). */
  cwd?: string;
}

/** A unit's text joined into its logical lines: continuations (a trailing backslash) joined, comments dropped. */
function unitLines(text: string): string[] {
  const lines: string[] = [];
  let held: string | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\r$/, '');
    const t = line.trim();
    // (a comment inside a continuation is skipped, and the continuation goes on)
    if (t.startsWith('#') || t.startsWith(';')) continue;
    const cont = /\\$/.test(line);
    const part = cont ? line.slice(0, -1) : line;
    held = held === undefined ? part : `${held} ${part.trimStart()}`;
    if (!cont) {
      lines.push(held.trim());
      held = undefined;
    }
  }
  if (held !== undefined) lines.push(held.trim());
  return lines.filter(Boolean);
}

/** Words as systemd splits them (systemd.syntax(7)): blanks separate, "…" and '…' quote, C escapes inside. */
function unitWords(value: string): string[] | { why: string } {
  const words: string[] = [];
  let i = 0;
  const escapes: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', '"': '"', "'": "'", ' ': ' ', s: ' ' };
  while (i < value.length) {
    while (i < value.length && /\s/.test(value[i]!)) i++;
    if (i >= value.length) break;
    let word = '';
    let quote: string | undefined;
    for (; i < value.length; i++) {
      const ch = value[i]!;
      if (ch === '\\' && i + 1 < value.length) {
        const e = escapes[value[i + 1]!];
        if (e === undefined) return { why: `the escape \\${value[i + 1]} in ${JSON.stringify(value)} is not read by opsctl` };
        word += e;
        i++;
      } else if (quote) {
        if (ch === quote) quote = undefined;
        else word += ch;
      } else if (ch === '"' || ch === "'") quote = ch;
      else if (/\s/.test(ch)) break;
      else word += ch;
    }
    if (quote) return { why: `an unclosed ${quote} in ${JSON.stringify(value)}` };
    words.push(word);
  }
  return words;
}

/**
 * The specifiers systemd expands in a value that the unit's own name gives (systemd.unit(5): %n, %N, %p, %i,
 * %I, %%; `unit`: the name from `systemctl cat`'s first "# /path/NAME" line); the others name the host or
 * the machine, which opsctl does not guess.
 */
function specifiers(value: string, key: string, unit: string | undefined): string | { why: string } {
  const full = unit ?? '';
  const base = full.replace(/\.[a-z]+$/, '');
  const at = base.indexOf('@');
  const known: Record<string, string> = { '%': '%', n: full, N: base, p: at >= 0 ? base.slice(0, at) : base, i: at >= 0 ? base.slice(at + 1) : '' };
  known.I = known.i!;
  let why: string | undefined;
  const out = value.replace(/%(.)/g, (all, c: string) => {
    const v = c === '%' || unit ? known[c] : undefined;
    if (v === undefined) why ??= `${key}= uses the specifier %${c}, which opsctl does not expand: a settings template that prints etcd's arguments instead`;
    return v ?? all;
  });
  return why ? { why } : out;
}

/**
 * The start of a service unit from `systemctl cat` output: the [Service] section's last ExecStart= (an empty
 * one resets, as a drop-in does), its Environment= and EnvironmentFile= lines and WorkingDirectory=.
 * (systemd.service(5), systemd.exec(5): ${VAR} is one word, a bare $VAR splits at blanks, a `:` prefix expands nothing.)
 */
export function parseUnit(text: string): UnitStart | { why: string } {
  let section = '';
  let exec: string | undefined;
  const env: Record<string, string> = {};
  let envFiles: UnitStart['envFiles'] = [];
  let cwd: string | undefined;
  // (systemctl cat heads each file with "# /path/NAME": the unit's name, for its specifiers; a drop-in's is NAME.d/…)
  const unit = /^# \/\S*\/([^/\s]+\.[a-z]+)$/m.exec(text)?.[1];
  for (const line of unitLines(text)) {
    const head = /^\[(.+)\]$/.exec(line);
    if (head) {
      section = head[1]!;
      continue;
    }
    if (section !== 'Service') continue;
    const kv = /^([A-Za-z]+)\s*=\s*(.*)$/.exec(line);
    if (!kv) continue;
    const key = kv[1]!;
    const value = specifiers(kv[2]!, key, unit);
    if (typeof value !== 'string') return value;
    if (key === 'ExecStart') exec = value || undefined;
    else if (key === 'Environment') {
      if (!value) for (const k of Object.keys(env)) delete env[k];
      const words = unitWords(value);
      if ('why' in words) return { why: `Environment=: ${words.why}` };
      for (const w of words) {
        const eq = w.indexOf('=');
        if (eq > 0) env[w.slice(0, eq)] = w.slice(eq + 1);
      }
    } else if (key === 'EnvironmentFile') {
      if (!value) envFiles = [];
      else envFiles.push({ path: value.replace(/^-/, ''), optional: value.startsWith('-') });
    } else if (key === 'WorkingDirectory') cwd = value.replace(/^-/, '') || undefined;
  }
  if (!exec) return { why: 'the unit has no ExecStart= in its [Service] section' };
  const prefix = /^[-@:+!]*/.exec(exec)![0];
  const words = unitWords(exec.slice(prefix.length));
  if ('why' in words) return { why: `ExecStart=: ${words.why}` };
  const program = words.shift();
  // (`@`: the second word is the argv[0] the program sees, not an argument)
  if (prefix.includes('@')) words.shift();
  if (!program) return { why: 'ExecStart= names no program' };
  if (/(^|\/)(sh|bash|dash|env)$/.test(program))
    return { why: `ExecStart= runs ${program}, not etcd with its flags: a settings template that prints etcd's arguments instead` };
  return { program, words, expand: !prefix.includes(':'), env, envFiles, ...(cwd ? { cwd } : {}) };
}

/**
 * What the unit's start runs etcd with, its EnvironmentFile= files read (`files`, in the unit's order; they
 * override Environment=): the arguments with ${VAR} and $VAR expanded, and the ETCD_* and GO* variables.
 */
export function unitStart(u: UnitStart, files: Array<Record<string, string>>): { args: string[]; env: Record<string, string> } {
  const all: Record<string, string> = { ...u.env };
  for (const f of files) Object.assign(all, f);
  const env = Object.fromEntries(Object.entries(all).filter(([k]) => /^(ETCD_|GO)[A-Z0-9_]*$/.test(k)));
  return { args: u.expand ? expandWords(u.words, all) : u.words, env };
}

/** ${VAR} replaced within a word; a word that is exactly $VAR becomes the variable's blank-separated words (systemd.service(5)). */
function expandWords(words: string[], env: Record<string, string>): string[] {
  return words.flatMap((w) => {
    const bare = /^\$([A-Za-z_][A-Za-z0-9_]*)$/.exec(w);
    if (bare) return (env[bare[1]!] ?? '').split(/\s+/).filter(Boolean);
    return [w.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, k: string) => env[k] ?? '')];
  });
}

/** An EnvironmentFile's assignments (systemd.exec(5): KEY=VALUE lines, # and ; comments, quotes around a value). */
export function unitEnvFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of unitLines(text)) {
    const kv = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!kv) continue;
    const v = kv[2]!;
    env[kv[1]!] = /^(["']).*\1$/.test(v) ? v.slice(1, -1) : v;
  }
  return env;
}
