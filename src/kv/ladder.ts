/**
 * The ladder: `kv upgrade --to 3.6` from a 3.2 cluster is four rolling upgrades, one per minor,
 * each a full run of the single-hop executor (runUpgrade: gate, snapshot, stop, backup, start,
 * catch-up, cluster version), with the cluster version confirmed at each hop's target before the
 * next hop. Each hop's rulebook (src/kv/rules) is checked before anything stops (for every hop, as
 * far as it can be seen from the start) and again before that hop's first stop.
 *
 * One journal for the whole ladder: `journals/<cluster>.ladder/ladder.json` names the hops and the
 * current one; each hop keeps the executor's own journal (journals/<cluster>.json, which kv rollback
 * reads while a hop is mixed), copied beside the ladder file when the hop is done. A re-run after a
 * kill -9 or Ctrl-C resumes at the ladder's current hop, and the executor at that hop's member.
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, readFileSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { OpsError } from '../core/errors.js';
import type { MemberSpec } from './cluster.js';
import { acquireLock, runUpgrade, UpgradeRefused, type UpgradeOptions, type UpgradeReport } from './executor.js';
import { isResumable, journalPath, writeJournal, type Journal } from './journal.js';
import { describeResume, resumeState, type ResumeState } from './resume-state.js';
import { readJournal } from './journal-read.js';
import { restorePointOf } from './restore-point.js';
import { hopName, planLadder, type Hop } from './ladder-plan.js';
import { SIM_RELEASES } from '@opsctl/etcd-sim/releases.js';
import { authEnabled, observeCluster } from './observe.js';
import { KvClient } from './client.js';
import { compareMinor, minor } from './parse.js';
import { describePlan, planUpgrade } from './planner.js';
import { checkHop, renderChecks } from './rules/index.js';
import { settingsOf } from './rules/settings.js';
import type { CheckRow, HopFacts, MemberFacts } from './rules/types.js';
import type { ClusterObservation } from './types.js';
import { fixV2store, unfinishedV2Fix } from './v2store-fix.js';
import { checkV2store, etcdutlIn } from './v2store-check.js';
import { hopTrials, trialFacts, type TrialHop } from './trial/hops.js';
import type { TrialFinding } from './trial/run.js';

export interface LadderOptions extends Omit<UpgradeOptions, 'to' | 'allowSameVersion' | 'targetBin' | 'confirm'> {
  to: string;
  /** Binaries per hop target (`--target-bin 3.4=DIR`); `*` for a one-hop `--target-bin DIR`. */
  targetBins: Record<string, string>;
  /** Refuse while any check could not run. */
  strict: boolean;
  /** The release cache (kv release get), when this build has one: the directory of a version's binaries. */
  releaseDir?: (version: string) => string | undefined;
  confirm?: UpgradeOptions['confirm'];
  /** Before the 3.5 → 3.6 hop: the guide's fix for members whose `etcdutl check v2store` fails (v2store-fix.ts). */
  fixV2store?: boolean;
  /** Seconds a trial start of a hop's binary may take to serve /health (src/kv/trial). */
  trialTimeoutS?: number;
  /** Rules whose refusals are shown as warnings instead (`--ignore-check ID`): the operator's own judgement, said on the plan. */
  ignoreChecks?: string[];
}

export interface HopReport {
  from: string;
  to: string;
  patch: boolean;
  status: 'pending' | 'running' | 'done' | 'halted';
  binDir?: string;
  binaryVersion?: string;
  /** The hop's executor journal, kept when the hop is done. */
  journal?: string;
  report?: UpgradeReport;
}

export interface LadderReport {
  kind: 'ladder';
  status: 'planned' | 'declined' | 'done' | 'halted' | 'nothing-to-do';
  cluster: string;
  from: string;
  to: string;
  resumed: boolean;
  ladderFile?: string;
  hops: HopReport[];
  checks: CheckRow[];
  planText: string;
  warnings: string[];
  /** The trial starts before the first stop: how many ran, and the wall time they took (at once). */
  trials?: { starts: number; ran: number; refused: number; ms: number };
  halt?: { hop: string; reason: string; rollback?: string };
  /** A resume: the hops done, the hop in flight (its members done and left), the hops left. */
  resume?: LadderResume;
}

export interface LadderResume {
  ladderFile: string;
  stopped: string;
  hopsDone: string[];
  hop: string;
  members?: ResumeState;
  hopsLeft: string[];
}

/** What a ladder's resume finds: the hops done and left, and inside the hop in flight its members (from its journal). */
function ladderResume(o: LadderOptions, lf: LadderFile, hops: Hop[], at: number): { state: LadderResume; text: string[] } {
  const cur = hops[at];
  const file = journalPath(o.dataDir, o.cluster.key);
  let members: ResumeState | undefined;
  try {
    const j = readJournal(file);
    if (cur && isResumable(j) && j.target === cur.to && j.createdAt >= lf.createdAt) members = resumeState(j, file);
  } catch {
    // (the executor names a journal it cannot use when it starts the hop)
  }
  const stopped =
    lf.status === 'halted'
      ? `halted at hop ${lf.halt?.hop ?? '?'}: ${lf.halt?.reason ?? ''}`
      : lf.status === 'interrupted'
        ? 'interrupted'
        : `the last run${lf.owner ? ` (pid ${lf.owner.pid} on ${lf.owner.host})` : ''} ended without a word: kill -9, a crash or a power loss`;
  const state: LadderResume = {
    ladderFile: ladderPath(o.dataDir, o.cluster.key),
    stopped: members?.stopped.how ?? stopped,
    hopsDone: hops.slice(0, at).map(hopName),
    hop: cur ? hopName(cur) : '',
    ...(members ? { members } : {}),
    hopsLeft: hops.slice(at + 1).map(hopName),
  };
  const text = [
    `Resuming the ladder recorded in ${state.ladderFile}: ${state.stopped} (last record ${members?.stopped.at ?? lf.updatedAt})`,
    `  hops done: ${state.hopsDone.join(', ') || 'none yet'}`,
    `  hop in flight: ${state.hop}${members ? '' : ' (no member of it touched yet)'}`,
    ...(members ? describeResume(members, cur!.to, '    ').slice(1) : []),
    `  hops left: ${state.hopsLeft.join(', ') || 'none after this one'}`,
  ];
  return { state, text };
}

/** The ladder file: the hops, the current one, and what was measured before the v2 API went off. */
export interface LadderFile {
  version: 1;
  id: string;
  cluster: string;
  from: string;
  to: string;
  status: 'running' | 'halted' | 'interrupted' | 'done';
  current: number;
  hops: Array<{
    from: string;
    to: string;
    patch: boolean;
    status: HopReport['status'];
    binDir?: string;
    binaryVersion?: string;
    journal?: string;
    /** The snapshot taken before the hop's first stop (`kv restore --from-hop FROM` rebuilds the cluster on FROM from it). */
    restorePoint?: { file: string; revision: string; sha256?: string; keys?: number };
  }>;
  v2?: { bytes: number; on: string };
  createdAt: string;
  updatedAt: string;
  halt?: LadderReport['halt'];
  /** The run that holds (or last held) the ladder: a resume after its kill -9 waits for its lock to go stale. */
  owner?: { pid: number; host: string };
}

/** Whether a run of `--to` goes through the ladder (more than one hop, or a hop already recorded). */
export function ladderDir(dataDir: string, key: string): string {
  return join(dataDir, 'kv', 'journals', `${key}.ladder`);
}

export function ladderPath(dataDir: string, key: string): string {
  return join(ladderDir(dataDir, key), 'ladder.json');
}

export function readLadder(file: string): LadderFile | undefined {
  if (!existsSync(file)) return undefined;
  let j: LadderFile;
  try {
    j = JSON.parse(readFileSync(file, 'utf8')) as LadderFile;
  } catch (err) {
    throw new OpsError(`the kv ladder file ${file} cannot be used: ${(err as Error).message}`, 1, {
      code: 'journal_invalid',
      hint: `it was not changed. Check the cluster with opsctl kv status; if no upgrade is half-done, move it aside (mv ${file} ${file}.bad) and run the command again`,
    });
  }
  if (j.version !== 1 || !Array.isArray(j.hops) || typeof j.current !== 'number' || typeof j.to !== 'string') {
    throw new OpsError(`the kv ladder file ${file} cannot be used: not a ladder (version, hops, current, to)`, 1, {
      code: 'journal_invalid',
      hint: `move it aside (mv ${file} ${file}.bad) once no upgrade is half-done, and run the command again`,
    });
  }
  return j;
}

/** The full version of `DIR/etcd` (etcd --version), or why it could not be read. */
export async function binaryVersion(exec: LadderOptions['exec'], dir: string): Promise<{ version: string } | { why: string }> {
  const bin = join(dir, 'etcd');
  if (!existsSync(bin)) return { why: `${bin} does not exist` };
  const r = await exec(bin, ['--version'], { reject: false, timeout: 30_000, extendEnv: false, env: { PATH: '/usr/bin:/bin' } });
  const v = /etcd Version:\s*(\S+)/.exec(String(r.stdout))?.[1];
  return v ? { version: v } : { why: `${bin} --version printed no "etcd Version:" (exit ${r.exitCode})` };
}

/** `etcd --version` of each --target-bin directory, asked while the cluster is first looked at (each a Go start-up; they only look). */
type EarlyVersions = Map<string, ReturnType<typeof binaryVersion>>;

function askVersionsEarly(o: LadderOptions): EarlyVersions {
  const early: EarlyVersions = new Map();
  if (o.cluster.sandbox?.kind === 'sim') return early;
  for (const dir of new Set(Object.values(o.targetBins))) {
    const v = binaryVersion(o.exec, dir);
    v.catch(() => undefined); // read (and its failure named) by hopBinaries
    early.set(dir, v);
  }
  return early;
}

/** The cluster as it is now, with the auth question asked of a healthy member. */
async function look(o: LadderOptions): Promise<ClusterObservation> {
  const obs = await observeCluster(o.cluster.members, { session: o.session, timeoutMs: o.timeouts.requestMs, debug: o.debug });
  obs.authEnabled = await authEnabled(obs.members, { session: o.session, timeoutMs: o.timeouts.requestMs, debug: o.debug });
  return obs;
}

/** The v2 store measured on a healthy member while its v2 API answers. */
async function measureV2(o: LadderOptions, obs: ClusterObservation): Promise<HopFacts['v2']> {
  const m = obs.members.find((x) => x.reachable && x.healthy);
  if (!m) return { why: 'no healthy member to measure the v2 store on' };
  const r = await new KvClient(m.endpoint, { session: o.session, timeoutMs: o.timeouts.requestMs, debug: o.debug }).v2DataBytes(100 * 1024 * 1024);
  if (r.bytes !== undefined) return { bytes: r.bytes, on: `measured on ${m.name} (${m.serverVersion}) over its v2 API` };
  const off = compareMinor(minor(m.serverVersion) ?? '3.4', '3.4') >= 0;
  return { why: `${r.why}${off ? ` (the v2 API is off from 3.4 unless --enable-v2; the ladder measures it while it is still on, before 3.3 → 3.4)` : ''}` };
}

/**
 * What the rules read for one member: its settings for the hop's target (those its trial judged,
 * else the config the driver reads) and its data dir.
 */
async function memberFacts(
  o: LadderOptions,
  m: MemberSpec,
  hop: Hop,
  binDir: string | undefined,
  version: string | undefined,
  tried?: TrialFinding,
): Promise<MemberFacts> {
  const out: MemberFacts = { name: m.name, serverVersion: version };
  if (tried?.settings) {
    out.settings = { source: tried.settings.source, list: tried.settings.list };
    if (tried.settings.config) out.config = tried.settings.config;
  } else if (o.driver?.readConfig) {
    try {
      const c = await o.driver.readConfig(m, { version: hop.to, binDir });
      if (c) {
        out.config = c;
        out.settings = await settingsOf(c.text, c.file);
      } else out.settings = { why: 'the driver found no config file for this member' };
    } catch (err) {
      out.settings = { why: `reading its config failed: ${(err as Error).message}` };
    }
  }
  const sim = o.cluster.sandbox?.kind === 'sim';
  if (o.driver?.type === 'local' && m.dataDir && !sim) {
    try {
      out.dataDir = { dir: m.dataDir, mode: statSync(m.dataDir).mode };
    } catch (err) {
      out.dataDir = { why: `${m.dataDir}: ${(err as Error).message}` };
    }
  } else if (sim) out.dataDir = { why: 'a simulated member keeps no etcd data dir' };
  else out.dataDir = { why: "the data dir is on the member's host: its mode is not read from here (there: stat -c %a DIR)" };
  return out;
}

interface Binaries {
  dir?: string;
  version?: string | { why: string };
}

/**
 * Each hop's binaries: `--target-bin VERSION=DIR`, else the release cache, else (simulated members)
 * the release the simulated member stands for. A real cluster without a binary for a hop, a binary
 * of another minor, or a --target-bin for no hop of the ladder is refused before anything stops.
 */
async function hopBinaries(o: LadderOptions, hops: Hop[], early?: EarlyVersions): Promise<{ bins: Record<string, Binaries>; reasons: string[] }> {
  const reasons: string[] = [];
  const bins: Record<string, Binaries> = {};
  const sim = o.cluster.sandbox?.kind === 'sim';
  const targets = [...new Set(hops.map((h) => h.to))];
  const given = { ...o.targetBins };
  if (given['*']) {
    if (targets.length !== 1) {
      reasons.push(
        `--target-bin ${given['*']}: this ladder has ${targets.length} hops (${targets.join(', ')}); name each hop's binaries: ${targets.map((t) => `--target-bin ${t}=DIR`).join(' ')}`,
      );
    } else given[targets[0]!] = given['*'];
    delete given['*'];
  }
  for (const v of Object.keys(given)) {
    if (!targets.includes(v)) reasons.push(`--target-bin ${v}=${given[v]}: no hop of this ladder goes to ${v} (its hops go to ${targets.join(', ')})`);
  }
  const asked: Array<{ t: string; dir: string; v: ReturnType<typeof binaryVersion> }> = [];
  for (const t of targets) {
    if (sim) {
      bins[t] = { version: SIM_RELEASES[t] };
      continue;
    }
    const dir = given[t] ?? o.releaseDir?.(t);
    if (!dir) {
      if (o.cluster.sandbox?.kind === 'etcd') {
        reasons.push(
          `no etcd binaries for the hop to ${t}: give --target-bin ${t}=DIR (a directory holding etcd ${t}.x)${o.releaseDir ? `, or fetch the release first: opsctl kv release get ${t}.N` : ''}`,
        );
      }
      bins[t] = {};
      continue;
    }
    // Every hop's `etcd --version` at once (each a Go start-up), read in hop order below.
    asked.push({ t, dir, v: early?.get(dir) ?? binaryVersion(o.exec, dir) });
  }
  for (const { t, dir, v: pending } of asked) {
    const v = await pending;
    if ('why' in v) reasons.push(`--target-bin ${t}=${dir}: ${v.why}`);
    else if (minor(v.version) !== t) reasons.push(`--target-bin ${t}=${dir}: its etcd is ${v.version}, not ${t}.x: the hop to ${t} needs a ${t} binary`);
    bins[t] = { dir, version: 'why' in v ? v : v.version };
  }
  return { bins, reasons };
}

/** The facts of one hop: each member's settings and data dir, auth, the v2 store, etcdutl's verdict. */
async function hopFacts(
  o: LadderOptions,
  hop: Hop,
  obs: ClusterObservation,
  bins: Record<string, Binaries>,
  v2: HopFacts['v2'],
  current: boolean,
  patchPlanned: boolean,
  trials?: Map<string, TrialFinding[]>,
): Promise<HopFacts> {
  const b = bins[hop.to] ?? {};
  const members = await Promise.all(
    o.cluster.members.map((m) =>
      memberFacts(
        o,
        m,
        hop,
        b.dir,
        current ? obs.members.find((x) => x.name === m.name)?.serverVersion : undefined,
        trials?.get(hopName(hop))?.find((t) => t.member === m.name),
      ),
    ),
  );
  const before = bins[hop.from]?.version;
  const facts: HopFacts = {
    from: hop.from,
    to: hop.to,
    binaryVersion: b.version,
    members,
    auth: obs.authEnabled === undefined ? { why: 'no member answered whether auth is enabled' } : obs.authEnabled,
    v2,
    current,
    patchHopPlanned: patchPlanned,
    startsFrom: typeof before === 'string' ? before : undefined,
    trials: trialFacts(trials, hopName(hop)),
  };
  if (hop.to === '3.6' && !hop.patch) {
    // Before the ladder's first stop too (a later hop): what the members' data dirs hold now, so the
    // plan says whether the fix will run, or why it cannot be told, before anything stops.
    const dirs: Record<string, string | undefined> = { given: bins['3.5']?.dir };
    for (const m of o.cluster.members) dirs[m.name] = o.driver?.current(m)?.binDir;
    facts.v2store = await checkV2store(o, dirs, trials?.get(hopName(hop)));
  }
  return facts;
}

/** A hop's member plan as the executor will run it (later hops: the members as they will be then). */
function hopPlanText(obs: ClusterObservation, hop: Hop, first: boolean, settle: string, noBackup: boolean): string {
  const seen: ClusterObservation = first
    ? obs
    : {
        ...obs,
        members: obs.members.map((m) => ({ ...m, serverVersion: `${hop.from}.0`, clusterVersion: `${hop.from}.0`, reachable: true, healthy: true })),
      };
  const r = planUpgrade(seen, { to: hop.to, allowSameVersion: hop.patch });
  if (!r.ok) return `    (the executor's pre-flight will refuse this hop as the cluster is now: ${r.reasons.join('; ')})`;
  return describePlan(r.plan, settle, { noBackup })
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}

/**
 * How --settle auto will size the v2 data between the hop's members, as the plan says it (the
 * settle step measures it then: steps.ts v2Size). Where nothing can, "not checked: why".
 */
export function settlePlan(o: Pick<LadderOptions, 'settle' | 'driver' | 'cluster'>, hop: Hop, v2: HopFacts['v2']): string {
  if (o.settle !== 'auto') return `settle ${o.settle} ms between members, as asked`;
  if (compareMinor(hop.to, '3.6') >= 0 || compareMinor(hop.from, '3.6') >= 0) return 'settle auto: no wait (etcd 3.6 keeps no v2 store)';
  if (o.cluster.sandbox?.kind === 'sim') return "settle auto: each simulated member's v2 size";
  const ways: string[] = [];
  const d = o.cluster.driver;
  if (o.driver?.type === 'command' && d?.type === 'command' && d.v2Size) ways.push("the v2-size template on each member's host");
  if (compareMinor(hop.from, '3.3') <= 0) ways.push("each member's v2 key tree over its v2 API");
  else ways.push("each member's v2 key tree over its v2 API where enable-v2 is on");
  if (v2 && 'bytes' in v2) ways.push(`the ${v2.bytes} bytes ${v2.on}`);
  if (o.driver?.type === 'local') ways.push("its newest member/snap/*.snap, else its WAL's v2 writes");
  else if (!(v2 && 'bytes' in v2) && compareMinor(hop.from, '3.4') >= 0 && !ways.some((w) => w.startsWith('the v2-size')))
    return "settle auto: v2 data size not checked: a 3.4+ member serves no v2 API unless enable-v2, its data dir is on its host and no v2-size template asks it there (driver.v2Size / --v2-size-cmd); the guide's rule applies: 2 minutes between members";
  return `settle auto: the guide's 2 minutes between members only over 50 MB of v2 data, sized by ${ways.join(', else ')}`;
}

/** The trials of `hops` (src/kv/trial): each member's settings on each hop's binary; `prior` stands where the settings did not change. */
function trialsOf(o: LadderOptions, hops: Hop[], bins: Record<string, Binaries>, prior?: Map<string, TrialFinding[]>): Promise<Map<string, TrialFinding[]>> {
  const list: TrialHop[] = hops.map((h) => ({ name: hopName(h), to: h.to, binDir: bins[h.to]?.dir, release: strOf(bins[h.to]?.version) }));
  return hopTrials({ driver: o.driver, members: o.cluster.members, timeoutS: o.trialTimeoutS ?? 30, debug: o.debug }, list, prior);
}

/** A hop's rules over its facts, with the refusals of the rules named by --ignore-check shown as warnings. */
async function check(o: LadderOptions, facts: HopFacts): Promise<CheckRow[]> {
  const rows = await checkHop(facts);
  const ignore = new Set(o.ignoreChecks ?? []);
  return rows.map((r) =>
    ignore.has(r.rule) && r.status === 'refuse' ? { ...r, status: 'warn', detail: `ignored (--ignore-check ${r.rule}): ${r.detail}` } : r,
  );
}

/** Every hop's checks, with the v2 store measured for the 3.4 and 3.5 rules. */
async function checkAll(
  o: LadderOptions,
  hops: Hop[],
  obs: ClusterObservation,
  bins: Record<string, Binaries>,
  v2: HopFacts['v2'],
  fromHop: number,
  trials: Map<string, TrialFinding[]>,
) {
  const patchPlanned = hops.some((h) => h.patch);
  // Every hop at once (each only looks: config reads, etcdutl on the data dirs).
  return Promise.all(
    hops.map(async (h, i) => (i < fromHop ? [] : check(o, await hopFacts(o, h, obs, bins, v2, i === fromHop, patchPlanned && !h.patch, trials)))),
  );
}

/** The plan's line on the v2store step before the first 3.6 start: planned (and how), refused instead, or not possible here. */
function v2fixPlan(o: LadderOptions): string {
  const check = 'before the first 3.6 start: etcdutl check v2store on every member';
  if (o.cluster.sandbox?.kind === 'sim') return `${check}: simulated members keep no etcd data dir (nothing to check)`;
  if (o.driver?.type === 'command')
    return `${check}, on its host (the trial template, the etcdutl beside the 3.5 binary there): custom v2 content found there stops the ladder before the first 3.6 start with the guide's fix (opsctl restarts members with snapshot-count 1 only where it reaches the data dirs: the sandbox)`;
  if (o.driver?.type !== 'local')
    return `${check}: not possible from here (no driver reaches the data dirs): run etcdutl check v2store --data-dir DIR on each host first`;
  if (!o.fixV2store) return `${check}; custom v2 content refuses the hop (--no-fix-v2store)`;
  return `${check}; a member with custom v2 content is restarted once on 3.5 with snapshot-count 1, one at a time with the usual gate, snapshot and backup (journalled: a re-run finishes it), then checked again`;
}

/** What --fix-v2store does before the 3.6 hop, as its rows say it. */
const FIX_WORDS =
  'the v2store fix (planned; --no-fix-v2store refuses instead): restarted once on 3.5 with snapshot-count 1 before the first 3.6 start (gate, snapshot, backup first), then checked again';

/** With --fix-v2store, a failing `etcdutl check v2store` is the fix's work before the hop, not a refusal. */
function planFix(o: LadderOptions, rows: CheckRow[]): CheckRow[] {
  if (!o.fixV2store) return rows;
  return rows.map((r) => {
    if (r.rule !== 'v2store-check' || r.status !== 'refuse' || !r.member) return r;
    const { fix: _fix, ...rest } = r;
    return { ...rest, status: 'before the hop', detail: `${r.detail.split('; fix:')[0]}; ${FIX_WORDS}` };
  });
}

const fixRows = (rows: CheckRow[]) => rows.filter((r) => r.rule === 'v2store-check' && r.member && r.detail.includes(FIX_WORDS));

/**
 * Before the 3.5 → 3.6 hop's first stop: the fix for the members its rows name (or the unfinished
 * fix a killed run left), then the hop's checks again on the cluster as the fix left it. Undefined
 * when there is nothing to fix.
 */
async function runFix(
  o: LadderOptions,
  hop: Hop,
  rows: CheckRow[],
  bins: Record<string, Binaries>,
  v2: HopFacts['v2'],
  trials?: Map<string, TrialFinding[]>,
): Promise<CheckRow[] | undefined> {
  const pending = unfinishedV2Fix(o.dataDir, o.cluster.key);
  const members = fixRows(rows).map((r) => r.member!);
  if (!pending && !members.length) return undefined;
  const dirs: Record<string, string | undefined> = { given: bins['3.5']?.dir };
  for (const m of o.cluster.members) dirs[m.name] = o.driver?.current(m)?.binDir;
  const etcdutl = etcdutlIn(dirs);
  if (!o.driver || !etcdutl) throw new UpgradeRefused(['--fix-v2store: no etcdutl beside the 3.5 binaries to check the fix with'], 'nothing was changed');
  o.reporter.note(
    pending
      ? `--fix-v2store: finishing the fix recorded for ${pending.members.map((x) => `${x.name} (${x.phase})`).join(', ')}`
      : `--fix-v2store: ${members.join(', ')} restarted once on 3.5 with snapshot-count 1, one at a time, before the hop`,
  );
  await fixV2store({ ...o, driver: o.driver, etcdutl, members });
  return check(o, await hopFacts(o, hop, await look(o), bins, v2, true, false, trials));
}

/** The rows that stop the ladder: refusals, and with --strict every check that could not run. */
function blocking(rows: CheckRow[], strict: boolean): CheckRow[] {
  return rows.filter((r) => r.status === 'refuse' || (strict && r.status === 'not checked'));
}

function reasonOf(r: CheckRow): string {
  // (A finding that names its own fix, as the 3.3 config check does, is not given the rule's too.)
  const fix = r.fix && !/fix:/.test(r.detail) ? `; fix: ${r.fix}` : '';
  const what = r.status === 'not checked' ? `not checked (--strict): ${r.detail}` : `${r.detail}${fix}`;
  return `${r.hop} [${r.rule}]${r.member ? ` member ${r.member}` : ''}: ${what} (${r.guide})`;
}

/** Refuses with every blocking row, naming --strict's part when that is what refuses. */
function refuseRows(rows: CheckRow[], stopped: boolean): never {
  const hint = stopped
    ? 'nothing of this hop was stopped: fix what the checks name, then run the same command to resume the ladder'
    : `nothing was stopped or changed: fix what the checks name, then run the same command${rows.some((r) => r.status === 'not checked') ? '; or drop --strict to go ahead with the checks that cannot run listed as such' : ''} (a refusal you have judged wrong: --ignore-check RULE, the id in brackets)`;
  throw new UpgradeRefused(rows.map(reasonOf), hint);
}

/**
 * The single-hop run with its rulebook checked first (`kv upgrade --to 3.4` on a 3.3 cluster), or
 * the ladder when the target is more than one hop away (or a ladder is recorded for this cluster).
 */
export async function runUpgradeOrLadder(o: LadderOptions): Promise<{ single: UpgradeReport; checks: CheckRow[] } | LadderReport> {
  const file = ladderPath(o.dataDir, o.cluster.key);
  const recorded = readLadder(file);
  if (recorded && recorded.status !== 'done') {
    if (recorded.to !== o.to) {
      throw new OpsError(`an unfinished upgrade ladder to ${recorded.to} of this cluster is recorded in ${file}`, 1, {
        code: 'journal_conflict',
        hint: `finish it with: opsctl kv upgrade --to ${recorded.to}   (or undo the hop in flight with: ${o.rollbackCommand})`,
      });
    }
    return runLadder(o, file, recorded);
  }
  // a journal opsctl cannot use is named (with its fix) before anything looks at the cluster, as a one-hop run always did
  const journal = journalPath(o.dataDir, o.cluster.key);
  if (existsSync(journal)) readJournal(journal);
  const early = askVersionsEarly(o);
  const obs = await look(o);
  const plan = planLadder(obs, o.to);
  if (!plan.ok) throw new UpgradeRefused(plan.reasons, 'fix the cluster first; nothing was changed');
  if (plan.hops.length <= 1) return single(o, obs, plan.hops[0], early);
  return runLadder(o, file, undefined, obs, plan.hops, early);
}

/** One hop: its rules, then the executor as before. */
async function single(
  o: LadderOptions,
  obs: ClusterObservation,
  hop: Hop | undefined,
  early?: EarlyVersions,
): Promise<{ single: UpgradeReport; checks: CheckRow[] }> {
  let checks: CheckRow[] = [];
  let v2: HopFacts['v2'];
  let trials: Map<string, TrialFinding[]> | undefined;
  let targetBin = o.targetBins['*'] ?? o.targetBins[o.to];
  if (hop && !hop.patch) {
    const { bins, reasons } = await hopBinaries(o, [hop], early);
    // The executor names a missing binary of a one-hop run itself, as it always has.
    const binReasons = reasons.filter((r) => !r.startsWith('no etcd binaries'));
    if (binReasons.length) throw new UpgradeRefused(binReasons, 'nothing was changed: give the binary of the right version');
    targetBin = bins[hop.to]?.dir ?? targetBin;
    const tried = o.now();
    const trying = trialsOf(o, [hop], bins);
    v2 = await measureV2(o, obs);
    trials = await trying;
    const trialMs = o.now() - tried;
    checks = planFix(o, await check(o, await hopFacts(o, hop, obs, bins, v2, true, false, trials)));
    const stop = blocking(checks, o.strict);
    if (stop.length) refuseRows(stop, false);
    o.reporter.note(['Checks of the hop (rulebook):', ...renderChecks(checks), `  ${settlePlan(o, hop, v2)}`, `  ${trialSummary(trials, trialMs)}`].join('\n'));
  }
  let confirm = o.confirm;
  const fixing = hop?.to === '3.6' && !o.dryRun && (fixRows(checks).length > 0 || unfinishedV2Fix(o.dataDir, o.cluster.key) !== undefined);
  if (hop && fixing) {
    // One question for both: the fix changes the cluster, so it is asked before the fix.
    const names = fixRows(checks).map((r) => r.member!);
    const planText = `Before the hop ${hop.from} → ${hop.to}: ${names.join(', ') || 'the members the recorded fix names'} restarted once on 3.5 with snapshot-count 1 (--fix-v2store); then the hop`;
    if (confirm && !(await confirm({ target: o.to, planText, warnings: [], members: o.cluster.members.length, resuming: false }))) {
      return { single: await runUpgrade({ ...o, to: o.to, allowSameVersion: false, targetBin, confirm: () => Promise.resolve(false), checks }), checks };
    }
    confirm = undefined;
    const bins = (await hopBinaries(o, [hop])).bins;
    const again = await runFix(o, hop, checks, bins, v2, trials);
    if (again) {
      checks = again;
      const stop = blocking(checks, o.strict);
      if (stop.length) refuseRows(stop, true);
      o.reporter.note(['Checks of the hop after --fix-v2store:', ...renderChecks(checks)].join('\n'));
    }
  }
  const report = await runUpgrade({
    ...o,
    to: hop?.patch ? hop.to : o.to,
    allowSameVersion: Boolean(hop?.patch),
    targetBin,
    confirm,
    checks,
    ...(v2 && 'bytes' in v2 ? { v2Measured: v2 } : {}),
  });
  return { single: report, checks };
}

/** The ladder: plan (or resume), every hop's checks, one question, then hop after hop. */
async function runLadder(
  o: LadderOptions,
  file: string,
  recorded?: LadderFile,
  seen?: ClusterObservation,
  planned?: Hop[],
  early?: EarlyVersions,
): Promise<LadderReport> {
  const obs = seen ?? (await look(o));
  const hops: Hop[] = recorded ? recorded.hops.map((h) => ({ from: h.from, to: h.to, patch: h.patch })) : planned!;
  const at = recorded?.current ?? 0;
  if (recorded) {
    // The hop in flight must be where the cluster is: a hop done by hand, or a member elsewhere, is refused.
    const plan = planLadder(obs, o.to);
    const hop = hops[at];
    if (!plan.ok) throw new UpgradeRefused(plan.reasons, `the ladder (${file}) was not resumed; nothing was changed`);
    if (hop && plan.hops[0] && (plan.hops[0].from !== hop.from || plan.hops[0].to !== hop.to)) {
      throw new UpgradeRefused(
        [`the ladder is at hop ${hopName(hop)}, but the cluster is at ${plan.from} (hop ${hopName(plan.hops[0])} next): was a hop done by hand?`],
        `nothing was changed: check the cluster (opsctl kv status); if it is where it should be, move the ladder file aside (mv ${file} ${file}.bad) and run the command again`,
      );
    }
  }
  // A resume without the --target-bin flags of the first run uses the binaries the ladder recorded.
  const recordedBins: Record<string, string> = {};
  for (const h of recorded?.hops.slice(at) ?? []) if (h.binDir) recordedBins[h.to] = h.binDir;
  // The v2 store measured while the binaries are asked their versions (both only look).
  const measuring = recorded?.v2 ? Promise.resolve(recorded.v2) : measureV2(o, obs);
  measuring.catch(() => undefined); // awaited below: a failure is thrown there, not unhandled meanwhile
  const { bins, reasons } = await hopBinaries({ ...o, targetBins: { ...recordedBins, ...o.targetBins } }, hops.slice(at), early);
  if (reasons.length) {
    await measuring.catch(() => undefined);
    throw new UpgradeRefused(reasons, 'nothing was changed: give each hop its binaries (--target-bin VERSION=DIR, repeatable)');
  }
  // Every member on every hop's binary, while the v2 store is measured (neither changes anything).
  const tried = o.now();
  const trying = trialsOf(o, hops.slice(at), bins);
  const v2 = await measuring;
  const trials = await trying;
  const trialMs = o.now() - tried;
  const trialLine = trialSummary(trials, trialMs);
  const rows = (await checkAll(o, hops, obs, bins, v2, at, trials)).map((r) => planFix(o, r));
  const settle = o.settle === 'auto' ? 'auto' : `${o.settle} ms`;
  const resume = recorded ? ladderResume(o, recorded, hops, at) : undefined;
  const planText = [ladderText(o, obs, hops, rows, bins, at, settle, v2), trialLine, ...(resume?.text ?? [])].join('\n');
  const report: LadderReport = {
    kind: 'ladder',
    status: 'planned',
    cluster: o.cluster.key,
    from: hops[0]!.from,
    to: o.to,
    resumed: Boolean(recorded),
    hops: hops.map((h, i) => ({
      ...h,
      status: recorded?.hops[i]?.status ?? 'pending',
      binDir: bins[h.to]?.dir,
      binaryVersion: strOf(bins[h.to]?.version),
      journal: recorded?.hops[i]?.journal,
    })),
    checks: rows.flat(),
    planText,
    warnings: [],
    trials: trialCounts(trials, trialMs),
    ...(resume ? { resume: resume.state } : {}),
  };
  const stop = blocking(rows.flat(), o.strict);
  if (o.dryRun) return report;
  if (stop.length) refuseRows(stop, false);
  o.reporter.note(planText);
  if (o.confirm && !(await o.confirm({ target: o.to, planText, warnings: [], members: o.cluster.members.length, resuming: Boolean(recorded) }))) {
    return { ...report, status: 'declined' };
  }
  const unlock = await lockLadder(file, o);
  try {
    return await climb(o, file, report, recorded, bins, v2, trials);
  } finally {
    await unlock().catch(() => undefined);
  }
}

/** The ladder's lock: the journal's lock rule (executor.ts acquireLock) with the owner the ladder file records. */
function lockLadder(file: string, o: LadderOptions): Promise<() => Promise<void>> {
  return acquireLock(file, o, (f) => {
    try {
      return readLadder(f)?.owner;
    } catch {
      return undefined;
    }
  });
}

/** How many trial starts there were, ran and refused, and their wall time. */
function trialCounts(trials: Map<string, TrialFinding[]>, ms: number): NonNullable<LadderReport['trials']> {
  const all = [...trials.values()].flat();
  return { starts: all.length, ran: all.filter((t) => t.result !== 'not-checked').length, refused: all.filter((t) => t.result === 'problem').length, ms };
}

/** The plan's line on the trials: how many ran, how long they took (they ran at once), how many refused. */
function trialSummary(trials: Map<string, TrialFinding[]>, ms: number): string {
  const t = trialCounts(trials, ms);
  return `Trials: ${t.ran} of ${t.starts} trial starts ran (every member on every hop's binary, at once) in ${ms} ms${t.refused ? `; ${t.refused} refused` : ''}${t.ran < t.starts ? `; ${t.starts - t.ran} not checked` : ''}`;
}

function strOf(v: string | { why: string } | undefined): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** Hop after hop, each one's executor run, the cluster version confirmed, the ladder file kept current. */
async function climb(
  o: LadderOptions,
  file: string,
  report: LadderReport,
  recorded: LadderFile | undefined,
  bins: Record<string, Binaries>,
  v2: HopFacts['v2'],
  trials: Map<string, TrialFinding[]>,
): Promise<LadderReport> {
  const now = () => new Date(o.now()).toISOString();
  const lf: LadderFile = recorded ?? {
    version: 1,
    id: `${now().replace(/[-:]/g, '').slice(0, 15)}-${randomBytes(3).toString('hex')}`,
    cluster: o.cluster.key,
    from: report.from,
    to: o.to,
    status: 'running',
    current: 0,
    hops: report.hops.map((h) => ({ from: h.from, to: h.to, patch: h.patch, status: 'pending', binDir: h.binDir, binaryVersion: h.binaryVersion })),
    ...(v2 && 'bytes' in v2 ? { v2 } : {}),
    createdAt: now(),
    updatedAt: now(),
  };
  lf.status = 'running';
  lf.owner = { pid: process.pid, host: hostname() };
  delete lf.halt;
  // The ladder file is a journal too: the same atomic, synced write, once per change of hop (a hop
  // done and the next one running are one write; the run's start and its first hop too).
  const save = () => writeJournal(file, lf as unknown as Journal, o.now(), true);
  /** Halts the ladder before `hop` changes anything, journalled, when a check of `rows` blocks it. */
  const haltOn = async (hop: (typeof lf.hops)[number], rows: CheckRow[]): Promise<void> => {
    const stop = blocking(rows, o.strict);
    if (!stop.length) return;
    hop.status = 'pending';
    lf.status = 'halted';
    lf.halt = { hop: hopName(hop), reason: stop.map(reasonOf).join('; ') };
    await save();
    refuseRows(stop, true);
  };
  const start = lf.current;
  if (lf.hops[start]) lf.hops[start].status = 'running';
  await save();
  const journal = journalPath(o.dataDir, o.cluster.key);
  /** The look that confirmed the previous hop's cluster version (taken a moment ago): the next hop's rules read it. */
  let confirmed: ClusterObservation | undefined;
  for (let i = start; i < lf.hops.length; i++) {
    const hop = lf.hops[i]!;
    if (i > start) {
      // Before this hop's first stop: its rules on the cluster as it is now (the first hop of this
      // run was checked on the plan a moment ago; the look after the previous hop is as fresh).
      const obs = confirmed ?? (await look(o));
      // Each member's settings read again: a trial runs again only where they changed since the plan.
      const again = await trialsOf(o, [hop], bins, trials);
      const facts = await hopFacts(
        o,
        hop,
        obs,
        bins,
        v2,
        true,
        lf.hops.some((h, k) => k > i && h.patch),
        again,
      );
      const rows = planFix(o, await check(o, facts));
      report.checks = [...report.checks.filter((r) => r.hop !== `${hop.from} → ${hop.to}`), ...rows];
      await haltOn(hop, rows);
    }
    if (hop.to === '3.6' && !hop.patch) {
      // --fix-v2store (or the fix a killed run left unfinished) before the hop's first stop, then its checks again
      const name = `${hop.from} → ${hop.to}`;
      let again: CheckRow[] | undefined;
      try {
        again = await runFix(
          o,
          hop,
          report.checks.filter((c) => c.hop === name),
          bins,
          v2,
          trials,
        );
      } catch (err) {
        hop.status = 'pending';
        lf.status = err instanceof UpgradeRefused ? 'halted' : 'interrupted';
        await save();
        throw err;
      }
      if (again) {
        report.checks = [...report.checks.filter((c) => c.hop !== name), ...again];
        await haltOn(hop, again);
      }
    }
    let r: UpgradeReport;
    try {
      const checks = report.checks.filter((c) => c.hop === `${hop.from} → ${hop.to}`);
      r = await runUpgrade({
        ...o,
        to: hop.to,
        allowSameVersion: hop.patch,
        targetBin: hop.binDir,
        confirm: undefined,
        checks,
        v2Measured: lf.v2 ?? (v2 && 'bytes' in v2 ? v2 : undefined),
      });
    } catch (err) {
      lf.status = 'interrupted';
      await save();
      throw err;
    }
    report.hops[i] = {
      ...report.hops[i]!,
      report: r,
      status: r.status === 'halted' ? 'halted' : r.status === 'done' || r.status === 'nothing-to-do' ? 'done' : 'running',
    };
    if (r.status === 'halted') {
      hop.status = 'halted';
      lf.status = 'halted';
      lf.halt = { hop: hopName(hop), reason: r.halt?.reason ?? 'halted', rollback: r.halt?.rollback };
      await save();
      return { ...report, status: 'halted', ladderFile: file, halt: lf.halt };
    }
    // The cluster version at the hop's target on every member before the next hop.
    const after = await look(o);
    confirmed = after;
    const off = after.members.filter((m) => minor(m.clusterVersion) !== hop.to || minor(m.serverVersion) !== hop.to);
    if (off.length) {
      lf.status = 'halted';
      lf.halt = {
        hop: hopName(hop),
        reason: `after the hop, ${off.map((m) => `${m.name} reports server ${m.serverVersion ?? '?'}, cluster ${m.clusterVersion ?? '?'}`).join('; ')}: not at ${hop.to}`,
      };
      await save();
      return { ...report, status: 'halted', ladderFile: file, halt: lf.halt };
    }
    if (existsSync(journal)) {
      const kept = join(ladderDir(o.dataDir, o.cluster.key), `hop-${i + 1}-${hop.from}-${hop.to}.json`);
      const j = readJournal(journal);
      if (j && j.target === hop.to) {
        copyFileSync(journal, kept);
        hop.journal = kept;
        const rp = restorePointOf(j);
        if (rp) hop.restorePoint = rp;
        report.hops[i]!.journal = kept;
      }
    }
    hop.status = 'done';
    lf.current = i + 1;
    const next = lf.hops[i + 1];
    if (next) next.status = 'running';
    else lf.status = 'done';
    await save();
  }
  if (lf.status !== 'done') {
    lf.status = 'done';
    await save();
  }
  return { ...report, status: 'done', ladderFile: file };
}

/** The plan: every hop, every member, every check with its result. */
function ladderText(
  o: LadderOptions,
  obs: ClusterObservation,
  hops: Hop[],
  rows: CheckRow[][],
  bins: Record<string, Binaries>,
  at: number,
  settle: string,
  v2: HopFacts['v2'],
): string {
  const lines = [
    `Ladder: ${hops[0]!.from} → ${o.to} in ${hops.length} hops, one rolling upgrade per minor; the cluster version is confirmed at each hop's target before the next${at ? ` (resuming at hop ${at + 1})` : ''}`,
  ];
  hops.forEach((h, i) => {
    const b = bins[h.to];
    const bin =
      o.cluster.sandbox?.kind === 'sim'
        ? `simulated ${strOf(b?.version) ?? h.to}`
        : b?.dir
          ? `${b.dir} (etcd ${strOf(b.version) ?? '?'})`
          : "the driver's start template ({version})";
    lines.push(`Hop ${i + 1}/${hops.length}: ${hopName(h)}${i < at ? ': done' : ''} — binaries: ${bin}`);
    if (i < at) return;
    lines.push(hopPlanText(obs, h, i === at, settle, Boolean(o.noBackup)));
    lines.push(`    ${settlePlan(o, h, v2)}`);
    if (h.to === '3.6' && !h.patch) lines.push(`    ${v2fixPlan(o)}`);
    const r = rows[i] ?? [];
    lines.push(r.length ? '    checks:' : '    checks: none for a patch hop (the same minor)');
    lines.push(...renderChecks(r, '      '));
  });
  return lines.join('\n');
}
