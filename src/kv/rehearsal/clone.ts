/**
 * The rehearsal: before the first stop, the whole plan (every hop, every fix, each member's stop, start
 * and waits, the cluster-version waits) run by the SAME executor, opsctl's own `kv upgrade`, on a clone
 * of the cluster. One step list, two targets: the clone and then the cluster.
 *
 * The clone: a copy of what the driver keeps for the members (the sandbox's directory: each member's data
 * dir, config file and records), made without stopping anything, then a child opsctl in namespaces of its
 * own: a network namespace whose loopback carries the members' own addresses and ports, a mount namespace
 * where the copy is bind-mounted over opsctl's data directory (so every path, config file and URL is the
 * one the cluster has: the clone's members start exactly as the driver will start the cluster's), and a PID
 * namespace. The child starts the clone's members, puts the cluster's load shape on them (a writer and a
 * /health probe, as monitoring does), and runs the identical upgrade with no trials, backups or settle waits.
 *
 * Its processes never outlive opsctl: the namespace's first process is killed when `unshare` ends
 * (--kill-child), `unshare` when opsctl ends (setpriv --pdeathsig KILL, kill -9 of opsctl included), and
 * every process of a PID namespace dies with its first. Nothing is left behind: the copy is removed. A
 * container engine's members (podman's, kv/containers/clone.ts) are its monitor's, not the run's: their
 * driver removes them after the run, and those of an opsctl killed meanwhile at its next look for a clone.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { procStartTime } from '../drivers/member-procs.js';
import { fetchMembers, type FetchSpec } from './fetch.js';
import { fetchedDir } from './clone-find.js';
import { dropMountPoints, makeMountPoints } from './mount-points.js';
import { copyPaused } from './copy.js';
import type { HopFacts } from '../rules/types.js';

type Exec = typeof import('execa').execa;

/** What the driver keeps for its members, to copy into the clone: directories under opsctl's data directory. */
export interface CloneSource {
  /** opsctl's data directory (the clone's copy is mounted over it). */
  readonly dataDir: string;
  /** The paths under it that hold the members (data dirs, config files, records). */
  readonly paths: readonly string[];
  /** Paths under it the clone reads as they are (binaries in the release cache): mounted back, not copied. */
  readonly keep?: readonly string[];
  /** The members' processes, paused (SIGSTOP) together for the copy and resumed after it whatever happens. */
  readonly pause?: readonly number[];
  /**
   * What the members keep outside it (a WAL dir of their own, wal-dir): copied too (while they are paused),
   * each copy mounted over its path in the clone, so a clone member opens its copy, never the cluster member's files.
   */
  readonly outside?: readonly string[];
  /** Files written into the copy (relative path → text): what the clone's run reads of the cluster (kv/rehearsal/command-clone.ts). */
  readonly files?: Readonly<Record<string, string>>;
  /** This host's addresses the members listen on besides loopback (CIDR): added to the clone's loopback. */
  readonly addresses?: readonly string[];
  /** The members' processes are a container engine's (CloneOf.engineRuns): the clone's run gets no PID namespace of its own. */
  readonly engineRuns?: boolean;
  /** Members on other hosts, brought here under one pause (kv/rehearsal/fetch.ts) into the copy's rehearsal/fetched/MEMBER. */
  readonly fetch?: readonly FetchSpec[];
  /** Paths the fetched copies are mounted over in the clone: made here for its run where missing, removed after. */
  readonly mountPoints?: readonly string[];
}

/** The child's own account of its run on the clone (`kv upgrade --json` of the child, with its load). */
export interface CloneRun {
  readonly status: string;
  readonly halt?: { reason?: string; hop?: string };
  readonly error?: { message?: string; hint?: string };
  /** Its load, its members' start, and how many of its hops' cluster versions a leader hand-off raised (kv/rehearsal/hand-off.ts). */
  readonly rehearsal?: {
    writes: { acked: number; lost: number; failed: number; unread?: true };
    probes: number;
    probeFailures: number;
    upMs: number;
    handOffs?: number;
  };
  /** Its steps as its journal holds them (a ladder's: per hop): each one's time is the real run's estimate of the same step. */
  readonly steps?: readonly CloneStep[];
  readonly hops?: ReadonlyArray<{ from: string; to: string; report?: { steps?: readonly CloneStep[] } }>;
}

export interface CloneStep {
  readonly kind: string;
  readonly member?: string;
  readonly status: string;
  readonly ms?: number;
}

export interface RehearsalVerdict {
  readonly ok: boolean;
  /** The whole rehearsal, the copy included. */
  readonly ms: number;
  readonly copyMs: number;
  /** What the child said (its report, or its error). */
  readonly run?: CloneRun;
  /** Why it did not pass, in the child's (and etcd's) words. */
  readonly reason?: string;
  /** The last lines of the child's messages, for a refusal. */
  readonly tail: string;
  /** The copy itself failed (no plan ran): what it names is the copy's problem, not a step's. */
  readonly copyFailed?: boolean;
}

/**
 * The shell prelude inside the namespaces: loopback up; opsctl's data dir held aside, the copy mounted
 * over it, and the paths that must stay the cluster's (binaries kept under the data dir: the release
 * cache) mounted back from the held one (after this host's addresses the members listen on, ADDR… --, are
 * put on the clone's loopback); the copies of what the members keep outside it mounted over
 * their paths (COPY PATH pairs); then opsctl. Values are its arguments, never its text.
 */
const PRELUDE = [
  'set -e',
  'ip link set lo up',
  'data=$1 copy=$2 held=$3',
  'shift 3',
  'while [ "$1" != -- ]; do ip addr add "$1" dev lo; shift; done',
  'shift',
  'mount --bind "$data" "$held"',
  'mount --bind "$copy" "$data"',
  'while [ "$1" != -- ]; do mkdir -p "$data/$1"; mount --bind "$held/$1" "$data/$1"; shift; done',
  'shift',
  'while [ "$1" != -- ]; do mount --bind "$1" "$2"; shift 2; done',
  'shift',
  'exec "$@"',
].join('\n');

/** Why a clone cannot be run on this machine (no unshare, setpriv or ip; not Linux), or undefined. */
export function cloneProblem(platform: NodeJS.Platform = process.platform): string | undefined {
  if (platform !== 'linux') return 'a clone runs in Linux namespaces';
  const missing = ['unshare', 'setpriv', 'ip', 'mount'].filter((p) => !['/usr/bin', '/bin', '/usr/sbin', '/sbin'].some((d) => existsSync(join(d, p))));
  return missing.length ? `${missing.join(', ')} not found (Debian: util-linux, mount, iproute2)` : undefined;
}

/**
 * Copies the members' files, runs `command` (opsctl's own upgrade, in its clone mode) inside the
 * namespaces, and reads its verdict. `command`: the argv of opsctl itself and its words.
 */
export async function rehearseOnClone(o: {
  source: CloneSource;
  command: readonly string[];
  env: NodeJS.ProcessEnv;
  exec: Exec;
  signal?: AbortSignal;
  timeoutMs: number;
  now: () => number;
  uid?: number;
  /** The clone's run's working directory (default: beside the copy). */
  cwd?: string;
  debug?: (line: string) => void;
  /** What the run that rehearses read of the members' data for its plan (JudgedReads as JSON), once read: told to the clone's run after the copy. */
  judged?: Promise<string | undefined>;
  /** Called once the copy is whole, or failed (every member resumed): the run that rehearses begins its own reads of the members' data then, not beside the copy. */
  copied?: () => void;
}): Promise<RehearsalVerdict> {
  const started = o.now();
  const problem = cloneProblem();
  if (problem) return { ok: false, ms: 0, copyMs: 0, reason: `the rehearsal cannot run here: ${problem}`, tail: '' };
  await reapClones(tmpdir());
  const tmp = await mkdtemp(join(tmpdir(), 'opsctl-rehearsal-'));
  // (mount points made on this machine for fetched members' copies: removed with the copy)
  const made: string[] = [];
  // (whose copy this is: a later rehearsal removes it once this process is gone, kill -9 included)
  await writeFile(join(tmp, OWNER), `${process.pid} ${procStartTime(process.pid) ?? ''}\n`);
  try {
    const copy = join(tmp, 'data');
    const pause = (o.source.pause ?? []).filter((pid) => Number.isSafeInteger(pid) && pid > 1).map(String);
    // what the members keep outside the data dir (their own WAL dirs): a copy each, mounted over its path below
    const outside = (o.source.outside ?? []).flatMap((p, i) => [join(tmp, 'outside', String(i)), p]);
    const pairs = [
      ...o.source.paths.flatMap((p) => [p, join(copy, relative(o.source.dataDir, p))]),
      ...(o.source.outside ?? []).flatMap((p, i) => [p, join(tmp, 'outside', String(i))]),
    ];
    // The clone's run starts now, while the copy is made: its namespaces, its mounts (of the copy's directories,
    // made first and filled below) and opsctl's own start, which waits for the copy (COPY_READY) before it reads
    // anything of it; it ends without it where the copy fails (its input ends without the word).
    await mkdir(copy);
    await mkdir(join(tmp, 'held'));
    // (opsctl's own data directory, mounted over in the clone: made where this is its first use)
    await mkdir(o.source.dataDir, { recursive: true, mode: 0o700 });
    for (let i = 0; i < outside.length; i += 2) await mkdir(outside[i]!, { recursive: true });
    const clone = launchCloneRun(o, { tmp, copy, outside });
    const abandon = async () => {
      clone.stdin?.end();
      await clone;
    };
    if (o.source.fetch?.length) {
      const f = await fetchMembers(o.source.fetch, (name) => fetchedDir(copy, name), { timeoutMs: 10 * 60_000, ...(o.signal ? { signal: o.signal } : {}) });
      if (!f.ok) {
        await abandon();
        const ms = o.now() - started;
        return {
          ok: false,
          ms,
          copyMs: ms,
          reason: `its copy of the members' files from their hosts failed (${f.why}); every member was resumed, nothing else was changed`,
          tail: '',
          copyFailed: true,
        };
      }
      o.debug?.(`[kv] rehearsal: ${o.source.fetch.length} members on their hosts paused together for the copy, ${f.pausedMs} ms`);
      made.push(
        ...(await makeMountPoints(
          o.source.mountPoints ?? [],
          o.source.fetch.map((x) => fetchedDir(copy, x.member)),
        )),
      );
    }
    const copied = await copyPaused(pause, pairs, o.now);
    if (!copied.ok) {
      await abandon();
      // (a member's file gone or unreadable meanwhile, the disk full: a refusal naming cp's words, never an unexpected error)
      return {
        ok: false,
        ms: o.now() - started,
        copyMs: o.now() - started,
        reason: `its copy of the members' files into ${tmp} failed (${copied.words}); every member was resumed, nothing else was changed`,
        tail: '',
        copyFailed: true,
      };
    }
    o.debug?.(
      `[kv] rehearsal: ${pause.length} member processes paused together for the copy, ${copied.pausedMs} ms (${copied.segments} WAL segments etcd appends to copied up to their records' end)`,
    );
    for (const [file, text] of Object.entries(o.source.files ?? {})) {
      await mkdir(dirname(join(copy, file)), { recursive: true });
      await writeFile(join(copy, file), text, { mode: 0o600 });
    }
    // the members' process records and logs are the cluster's: the clone writes its own
    for (const f of await readdir(copy, { recursive: true })) if (/\.(pid|proc\.json|log)$/.test(f)) await rm(join(copy, f), { force: true });
    const copyMs = o.now() - started;
    o.copied?.();
    o.debug?.(`[kv] rehearsal: copied ${[...o.source.paths, ...(o.source.outside ?? [])].join(', ')} into ${tmp} in ${copyMs} ms`);
    // (the clone's run gone already, a prelude that failed: its words below)
    clone.stdin?.on('error', () => undefined);
    clone.stdin?.write(COPY_READY);
    // (then what this run read for its plan, as soon as it has: the clone's run reads the same data only where it is not told)
    void (o.judged ?? Promise.resolve(undefined)).then(
      (text) => clone.stdin?.end(text === undefined ? undefined : `${JUDGED}${text}\n`),
      () => clone.stdin?.end(),
    );
    const r = await clone;
    const stdout = String(r.stdout ?? '');
    const stderr = String(r.stderr ?? '');
    o.debug?.(`[kv] rehearsal: the clone's run exited ${r.exitCode ?? r.signal ?? '?'}`);
    // (the clone's --debug lines, where the parent is debugging: said as the clone's, and never its last words)
    const debugLine = (l: string) => /^\s*(?:\d+ )?debug /.test(l);
    if (o.debug) for (const l of stderr.split('\n').filter(debugLine)) o.debug(`[kv] clone: ${l.trim()}`);
    const tail = stderr
      .split('\n')
      .filter((l) => l && !debugLine(l))
      .slice(-12)
      .join('\n');
    const run = parseRun(stdout) ?? parseRun(stderr.slice(stderr.lastIndexOf('\n{') + 1));
    const ms = o.now() - started;
    if (r.timedOut)
      return { ok: false, ms, copyMs, reason: `the clone's run took longer than ${Math.round(o.timeoutMs / 1000)} s`, tail, ...(run ? { run } : {}) };
    if (!run) return { ok: false, ms, copyMs, reason: `the clone's run ended (exit ${r.exitCode ?? r.signal ?? '?'}) without a report`, tail };
    const lost = run.rehearsal?.writes.lost ?? 0;
    const unread = Boolean(run.rehearsal?.writes.unread);
    const ok = r.exitCode === 0 && run.status === 'done' && lost === 0 && !unread;
    const reason = ok
      ? undefined
      : run.status === 'done'
        ? unread
          ? `no member of the clone answered the read-back of its load's ${run.rehearsal?.writes.acked ?? 0} acknowledged writes within a minute: whether any was lost cannot be told`
          : `${lost} acknowledged writes of the clone's load were lost`
        : (run.halt?.reason ?? run.error?.message ?? `the clone's run ended ${run.status}`);
    // etcd's own last words in the clone's member logs (a panic, a fatal line), before the copy is removed
    const words = ok ? [] : await etcdWords(copy);
    return { ok, ms, copyMs, run, tail: [tail, ...words].filter(Boolean).join('\n'), ...(reason ? { reason } : {}) };
  } finally {
    await rm(tmp, { recursive: true, force: true });
    await dropMountPoints(made);
  }
}

/** What the clone's run is told on its input (a pipe) once the copy is whole: kv upgrade --rehearsal-clone reads nothing of it before. */
export const COPY_READY = 'opsctl-copy: ready\n';

/**
 * The line after it: what the run that rehearses read of the members' data for its plan (each hop's etcdutl check
 * v2store and WAL replay, by hop name), read beside the copy from the same files. The clone's run takes it
 * for its own plan's reads instead of reading its copy again (at 100 MB, etcdutl on three copies is seconds of the
 * rehearsal's own time); each hop's reads on the way (a later hop, the just-in-time check) are its own.
 */
export const JUDGED = 'opsctl-judged: ';

/** The plan's data reads by hop name (ladder/facts.ts DataReads: etcdutl check v2store, the WAL's v2 requests). */
export type JudgedReads = ReadonlyMap<string, Pick<HopFacts, 'v2store' | 'walReplay'>>;

/** JUDGED's text as the clone's run reads it: every hop's reads of the known kinds, else undefined (it reads its copy itself). */
export function parseJudged(text: string | undefined): JudgedReads | undefined {
  try {
    const entries = JSON.parse(text ?? '') as unknown;
    if (!Array.isArray(entries)) return undefined;
    const out = new Map<string, Pick<HopFacts, 'v2store' | 'walReplay'>>();
    for (const e of entries as unknown[]) {
      if (!Array.isArray(e) || typeof e[0] !== 'string' || typeof e[1] !== 'object' || e[1] === null) return undefined;
      const reads = e[1] as Record<string, unknown>;
      const known = ['v2store', 'walReplay'] as const;
      if (Object.keys(reads).some((k) => !(known as readonly string[]).includes(k))) return undefined;
      if (known.some((k) => Object.hasOwn(reads, k) && (typeof reads[k] !== 'object' || reads[k] === null))) return undefined;
      out.set(e[0], reads);
    }
    return out;
  } catch {
    return undefined;
  }
}

/** The clone's run started in its namespaces (see PRELUDE), its input a pipe: COPY_READY once the copy is whole. */
function launchCloneRun(
  o: Pick<Parameters<typeof rehearseOnClone>[0], 'source' | 'command' | 'env' | 'exec' | 'signal' | 'timeoutMs' | 'uid' | 'cwd' | 'debug' | 'now'>,
  { tmp, copy, outside }: { tmp: string; copy: string; outside: readonly string[] },
) {
  // (a container engine's members are its monitor's children, which must outlive the run: no PID namespace then)
  const unshare = [
    'unshare',
    ...(o.uid === 0 ? [] : ['--user', '--map-root-user']),
    '--mount',
    '--net',
    ...(o.source.engineRuns ? [] : ['--pid', '--fork', '--kill-child', '--mount-proc']),
    '--propagation',
    'private',
  ];
  const keep = (o.source.keep ?? []).map((p) => relative(o.source.dataDir, p)).filter((p) => p && !p.startsWith('..'));
  const argv = [
    'setpriv',
    '--pdeathsig',
    'KILL',
    '--',
    ...unshare,
    '--',
    'sh',
    '-c',
    PRELUDE,
    'sh',
    o.source.dataDir,
    copy,
    join(tmp, 'held'),
    ...(o.source.addresses ?? []),
    '--',
    ...keep,
    '--',
    ...outside,
    '--',
    ...o.command,
  ];
  o.debug?.(`[kv] rehearsal: the clone's run starts beside the copy`);
  return o.exec(argv[0]!, argv.slice(1), {
    env: o.env,
    extendEnv: false,
    reject: false,
    stdin: 'pipe',
    timeout: o.timeoutMs,
    ...(o.signal ? { cancelSignal: o.signal } : {}),
    cwd: o.cwd ?? dirname(copy),
  });
}

const OWNER = 'owner';

/**
 * The copies of rehearsals whose opsctl is gone (killed before its own clean-up could run): removed. A copy
 * is named by its owner file (pid and start time); one without it, or whose owner still runs, is left alone.
 * Its clone's mounts lived in the clone's own mount namespace, which ended with it: only files are left.
 */
export async function reapClones(dir: string): Promise<string[]> {
  const gone: string[] = [];
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (!name.startsWith('opsctl-rehearsal-')) continue;
    const owner = await readFile(join(dir, name, OWNER), 'utf8').catch(() => undefined);
    const [pid, start] = (owner ?? '').trim().split(' ');
    if (!pid || !/^\d+$/.test(pid)) continue;
    const now = procStartTime(Number(pid));
    if (now !== undefined && (!start || now === start)) continue;
    await rm(join(dir, name), { recursive: true, force: true });
    gone.push(join(dir, name));
  }
  return gone;
}

/** The last line of each member log in the clone that says why etcd stopped (a panic, a fatal or error line), named by its file. */
async function etcdWords(copy: string): Promise<string[]> {
  const out: string[] = [];
  for (const f of (await readdir(copy, { recursive: true }).catch(() => [] as string[])).filter((x) => x.endsWith('.log')).sort()) {
    const text = await readFile(join(copy, f), 'utf8').catch(() => '');
    const last = text
      .split('\n')
      .filter((l) => /panic|"level":"(fatal|error)"|flag provided but not defined|invalid value/.test(l))
      .pop();
    if (last) out.push(`${f}: ${last.slice(0, 400)}`);
  }
  return out;
}

/** The child's JSON (its report on stdout, or `{"error":…}` on stderr). */
function parseRun(text: string): CloneRun | undefined {
  const t = text.trim();
  if (!t.startsWith('{')) return undefined;
  try {
    const v = JSON.parse(t) as Record<string, unknown>;
    if (v.error && typeof v.error === 'object') return { status: 'refused', error: v.error };
    return typeof v.status === 'string' ? (v as unknown as CloneRun) : undefined;
  } catch {
    return undefined;
  }
}

/** How opsctl runs itself: the single executable alone, else node with the launcher beside the bundle (or the sources). */
export function selfCommand({ execPath, sea, here }: { execPath: string; sea: boolean; here: string }): string[] {
  if (sea) return [execPath];
  const launcher = [join(here, '../../bin/opsctl.cjs'), join(here, '../bin/opsctl.cjs'), join(here, '../../../bin/opsctl.cjs')].find((f) => existsSync(f));
  if (!launcher) throw new Error(`the rehearsal cannot find opsctl's launcher (bin/opsctl.cjs) near ${here}`);
  return [execPath, launcher];
}
