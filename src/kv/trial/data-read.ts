/**
 * What a data trial's script (trial/data-script.ts) printed, read; and where a member keeps its data,
 * as its settings say (the script copies from there).
 */
import { isAbsolute, join } from 'node:path';
import { envName, flagWords, type StartSettings } from '../drivers/start-settings.js';
import type { ConfigDoc } from './rewrite.js';

/** One HashKV answer: the hash and the compaction it covers, or what etcdctl said instead. */
export type HashRead = { hash: string; compact: string; revision?: string } | { error: string };

/** Times of the copy (once for every step), in ms as the member's host measured them. */
export interface CopyPhases {
  snapshot?: number;
  copy?: number;
  /** The live member's HashKV. */
  liveHash?: number;
}

/** What the copy was made of. */
export interface CopyFacts {
  attempts: number;
  dbBytes: number;
  walFiles: number;
  snapFiles: number;
  /** sha256 of the snapshot stream: verified, not verified (no openssl or sha256sum on the host), or no trailer. */
  sha256: string;
}

/** One target's start on the copy (a step); a step after a failed one never ran and is absent. */
export type StepOutcome = (
  | { kind: 'exited'; code: number; ms: number; log: string }
  | { kind: 'timeout'; ms: number; last: string; log: string }
  | { kind: 'answered'; ms: number; revision: string; copy: HashRead; hashMs?: number; stopMs?: number }
) & { version?: string };

export type DataOutcome = (
  { kind: 'refused'; reason: string; detail: string } | { kind: 'ran'; steps: StepOutcome[]; live?: HashRead } | { kind: 'error'; message: string }
) & {
  isolation?: string;
  etcdctl?: string;
  /** The live member's revision before the snapshot (the copy holds at least that). */
  liveRevision?: string;
  /** Both hashed at their heads: the copy was compacted at its own head (its revision, which the live member must still be at). */
  hashHead?: string;
  copied?: CopyFacts;
  phases: CopyPhases;
  notes: string[];
};

/** The script's output, read. */
export function parseData(stdout: string): DataOutcome {
  const lines = stdout.split('\n');
  const said = (word: string): string | undefined => {
    const l = lines.find((x) => x.startsWith(`opsctl-data: ${word} `) || x === `opsctl-data: ${word}`);
    return l === undefined ? undefined : l.slice(`opsctl-data: ${word}`.length).trim();
  };
  const phases: CopyPhases = {};
  const copiedLine = said('copied');
  let copied: CopyFacts | undefined;
  if (copiedLine !== undefined) {
    const [attempts, snap, cp, db, wal, snaps] = copiedLine.split(' ').map(Number);
    phases.snapshot = snap;
    phases.copy = cp;
    copied = { attempts: attempts ?? 1, dbBytes: db ?? 0, walFiles: wal ?? 0, snapFiles: snaps ?? 0, sha256: said('sha256') ?? 'no trailer' };
  }
  const liveMs = said('livehashms');
  if (liveMs !== undefined) phases.liveHash = Number(liveMs);
  const common = {
    phases,
    notes: lines.filter((l) => l.startsWith('opsctl-data: note ')).map((l) => l.slice('opsctl-data: note '.length)),
    ...opt('isolation', said('iso')),
    ...opt('etcdctl', said('etcdctl')),
    ...opt('liveRevision', said('liverev')),
    ...opt('hashHead', said('hashhead')),
    ...(copied ? { copied } : {}),
  };
  const refused = said('not');
  if (refused !== undefined) {
    const [reason = 'error', ...rest] = refused.split(' ');
    return { kind: 'refused', reason, detail: rest.join(' '), ...common };
  }
  const steps: StepOutcome[] = [];
  for (let n = 0; ; n++) {
    const step = stepOf(lines, n, (w) => said(`step ${n} ${w}`));
    if (!step) break;
    steps.push(step);
  }
  if (steps.length) {
    const live = said('livehash');
    return { kind: 'ran', steps, ...(live !== undefined ? { live: hashOf(live, said('livehasherr') ?? '') } : {}), ...common };
  }
  const text = stdout.trim();
  return { kind: 'error', message: `the data trial's script printed no result${text ? `: ${text.slice(-300)}` : ''}`, ...common };
}

function stepOf(lines: string[], n: number, said: (word: string) => string | undefined): StepOutcome | undefined {
  const version = opt('version', said('version'));
  const exited = said('exited');
  if (exited !== undefined) {
    const [code, ms] = exited.split(' ').map(Number);
    return { kind: 'exited', code: code ?? -1, ms: ms ?? 0, log: logOf(lines, n), ...version };
  }
  const timeout = said('timeout');
  if (timeout !== undefined) {
    const [ms = '0', ...last] = timeout.split(' ');
    return { kind: 'timeout', ms: Number(ms), last: last.join(' '), log: logOf(lines, n), ...version };
  }
  const ready = said('ready');
  if (ready === undefined) return undefined;
  const [ms = '0', revision = ''] = ready.split(' ');
  const hashMs = said('hashms');
  const stopMs = said('stopped');
  return {
    kind: 'answered',
    ms: Number(ms),
    revision,
    copy: hashOf(said('copyhash') ?? '', said('copyhasherr') ?? ''),
    ...(hashMs !== undefined ? { hashMs: Number(hashMs) } : {}),
    ...(stopMs !== undefined ? { stopMs: Number(stopMs) } : {}),
    ...version,
  };
}

function opt<K extends string>(key: K, v: string | undefined): Partial<Record<K, string>> {
  return v ? ({ [key]: v } as Record<K, string>) : {};
}

function logOf(lines: string[], n: number): string {
  const at = lines.indexOf(`opsctl-data: step ${n} log`);
  if (at < 0) return '';
  const end = lines.indexOf(`opsctl-data: step ${n} endlog`, at);
  return lines.slice(at + 1, end < 0 ? undefined : end).join('\n');
}

/**
 * etcdctl endpoint hashkv -w json (one endpoint): `[{"Endpoint":…,"HashKV":{"header":…,"hash":N,"compact_revision":N}}]`,
 * read by pattern (the header's uint64 ids would lose precision in JSON.parse); else what it said.
 */
export function hashOf(json: string, stderr: string): HashRead {
  const hash = /"hash":(\d+)/.exec(json)?.[1];
  const revision = /"revision":(\d+)/.exec(json)?.[1];
  if (hash !== undefined) return { hash, compact: /"compact_revision":(-?\d+)/.exec(json)?.[1] ?? '0', ...(revision ? { revision } : {}) };
  const failed = /Failed to get the hash of endpoint \S+ \((.*)\)/.exec(stderr)?.[1];
  const err = /Error:\s*(.*)/.exec(stderr)?.[1];
  return { error: (failed ?? err ?? stderr.trim()) || 'etcdctl endpoint hashkv printed nothing' };
}

/**
 * The member's data dir and WAL dir, as etcd reads them: from its config file alone where it names one
 * (etcd then reads no flag and no variable), else a flag, else an ETCD_* variable; the data dir's default is
 * NAME.etcd. Relative paths are read from the member's working directory (`cwd`).
 */
export function memberDirs(s: StartSettings, doc: ConfigDoc | undefined, cwd: string | undefined): { dataDir: string; walDir?: string } | { why: string } {
  const get = (key: string): unknown => {
    if (doc) return doc.get(key);
    const f = flagWords(s.args).find((x) => x.key === key);
    return f ? f.value : s.env[envName(key)];
  };
  const text = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : undefined);
  const name = text(get('name')) ?? 'default';
  const data = text(get('data-dir')) ?? `${name}.etcd`;
  const wal = text(get('wal-dir'));
  const abs = (p: string): string | undefined => (isAbsolute(p) ? p : cwd ? join(cwd, p) : undefined);
  const dataDir = abs(data);
  if (!dataDir) return { why: `its data dir ${JSON.stringify(data)} is relative and its working directory is not known` };
  if (wal === undefined) return { dataDir };
  const walDir = abs(wal);
  if (!walDir) return { why: `its WAL dir ${JSON.stringify(wal)} is relative and its working directory is not known` };
  return { dataDir, walDir };
}

/** The member's TLS files as its settings give them (the config file's client-transport-security, flags, variables). */
export function memberTls(
  s: StartSettings,
  doc: ConfigDoc | undefined,
  cwd: string | undefined,
): { certAuth: boolean; cert?: string; key?: string; ca?: string } {
  const get = (key: string): unknown => {
    if (doc) {
      const nested = doc.get('client-transport-security') as Record<string, unknown> | undefined;
      return nested?.[key] ?? doc.get(key);
    }
    const f = flagWords(s.args).find((x) => x.key === key);
    return f ? f.value : s.env[envName(key)];
  };
  const path = (key: string): string | undefined => {
    const v = get(key);
    if (typeof v !== 'string' || !v) return undefined;
    return isAbsolute(v) || !cwd ? v : join(cwd, v);
  };
  const on = get('client-cert-auth');
  return {
    certAuth: on === true || String(on) === 'true',
    ...opt('cert', path('cert-file')),
    ...opt('key', path('key-file')),
    ...opt('ca', path('trusted-ca-file')),
  };
}
