/** What the ladder learns before its first stop: each hop's binaries and their versions, the members' settings and v2 data, each hop's plan text. */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { MemberSpec } from '../cluster/cluster-file.js';
import { capabilitiesOf, placeOf } from '../drivers/driver.js';
import { hopName, type Hop } from './plan.js';
import { authEnabled, observeCluster } from '../cluster/observe.js';
import { KvClient } from '../cluster/client.js';
import { compareMinor, minor, previousMinor } from '../cluster/parse.js';
import { waitFor } from '../cluster/wait.js';
import { describePlan, planUpgrade } from '../upgrade/planner.js';
import { settingsOf } from '../rules/settings.js';
import type { HopFacts, MemberFacts } from '../rules/types.js';
import type { ClusterObservation } from '../cluster/types.js';
import { ladderRow } from '@opsctl/shared/etcd-ladder.js';
import { binDirOf, checkV2store, walReplayOf } from '../v2fix/v2store-check.js';
import { v3MembershipFacts } from './v3-membership.js';
import { dataTrialFacts, trialFacts } from '../trial/hops.js';
import type { TrialFinding } from '../trial/run.js';
import { type BinarySources, type LadderOptions } from './record.js';
import type { JudgedReads } from '../rehearsal/clone.js';
import type { Snapshotting } from '../upgrade/options.js';
import { UpgradeRefused, type Look, type Reach, type Waits } from '../upgrade/options.js';
import { membershipProblems, readMembership } from '../cluster/membership.js';

/** The full version of `DIR/etcd` (etcd --version), or why it could not be read. */
export async function binaryVersion(exec: LadderOptions['exec'], dir: string): Promise<{ version: string } | { why: string }> {
  const bin = join(dir, 'etcd');
  if (!existsSync(bin)) return { why: `${bin} does not exist` };
  const r = await exec(bin, ['--version'], { reject: false, timeout: 30_000, extendEnv: false, env: { PATH: '/usr/bin:/bin' } });
  const v = /etcd Version:\s*(\S+)/.exec(String(r.stdout))?.[1];
  return v ? { version: v } : { why: `${bin} --version printed no "etcd Version:" (exit ${r.exitCode})` };
}

/** `etcd --version` of each --target-bin directory, asked while the cluster is first looked at (each a Go start-up; they only look). */
export type EarlyVersions = Map<string, ReturnType<typeof binaryVersion>>;

export function askVersionsEarly(o: Pick<LadderOptions, 'driver' | 'targetBins' | 'exec'>): EarlyVersions {
  const early: EarlyVersions = new Map();
  if (!capabilitiesOf(o.driver).askVersion) return early; // no binaries to ask
  for (const dir of new Set(Object.values(o.targetBins))) {
    const v = binaryVersion(o.exec, dir);
    v.catch(() => undefined); // read (and its failure named) by hopBinaries
    early.set(dir, v);
  }
  return early;
}

/** The cluster as it is now, with the auth question asked of a healthy member. */
export async function look(o: Pick<LadderOptions, Look>): Promise<ClusterObservation> {
  const obs = await observeCluster(o.cluster.members, { session: o.session, timeoutMs: o.timeouts.requestMs, debug: o.debug });
  obs.authEnabled = await authEnabled(obs.members, { session: o.session, timeoutMs: o.timeouts.requestMs, debug: o.debug });
  return obs;
}

/**
 * The cluster version etcd gives a cluster it has just made (its minimum, 3.0), until its leader first checks the
 * members' versions (on its first commit in a term, then every 4 s): seen on a 3.5.35 cluster made seconds before at
 * load 13. Waited for as a lagging one is, not refused as a state no upgrade leaves.
 */
const FRESH_CLUSTER_VERSION = '3.0';

/**
 * Every member answers on one minor while the cluster version is still the minor before: a rolling restart
 * onto it (by hand, or a hop's last start) ended moments ago, and etcd's leader moves the cluster version
 * once it has seen every member on the new one (seconds). Waited for, up to the cluster-version timeout,
 * as the upgrade waits after its own last start, rather than refused; any other state is returned as seen.
 */
export async function clusterVersionCaughtUp(o: Pick<LadderOptions, Waits | 'reporter'>, obs: ClusterObservation): Promise<ClusterObservation> {
  // (behind: the minor before, or a fresh cluster's 3.0 that its leader has not yet raised)
  const behind = (cv: string | undefined, to: string) => cv === previousMinor(to) || cv === FRESH_CLUSTER_VERSION;
  const lagging = (x: ClusterObservation) => {
    const minors = new Set(x.members.map((m) => (m.reachable ? minor(m.serverVersion) : undefined)));
    const [only] = minors;
    const cluster = new Set(x.members.map((m) => minor(m.clusterVersion)));
    const [cv] = cluster;
    return minors.size === 1 && only && cluster.size === 1 && behind(cv, only) ? only : undefined;
  };
  const to = lagging(obs);
  if (!to) return obs;
  const step = o.reporter.begin(`waiting for the cluster version to reach ${to} (every member runs ${to}; etcd's leader moves it once it has seen them all)`);
  const t0 = o.now();
  const seen = await waitFor(
    async () => {
      // until every member reports it (the leader moves first); a state other than on the way there is returned as seen
      // (auth does not change while it waits: the first look's answer is kept, not asked again each poll)
      const now = await observeCluster(o.cluster.members, { session: o.session, timeoutMs: o.timeouts.requestMs, debug: o.debug });
      now.authEnabled = obs.authEnabled;
      const on = now.members.every((m) => m.reachable && minor(m.serverVersion) === to);
      const moving = now.members.every((m) => minor(m.clusterVersion) === to || behind(minor(m.clusterVersion), to));
      return on && moving && !now.members.every((m) => minor(m.clusterVersion) === to) ? undefined : now;
    },
    { timeoutMs: o.timeouts.clusterVersionMs, pollMs: o.timeouts.pollMs, now: o.now, signal: o.signal, what: `the cluster version ${to}` },
  ).catch(() => undefined);
  if (!seen) {
    step.fail(`the cluster version did not reach ${to} within ${Math.round(o.timeouts.clusterVersionMs / 1000)} s`);
    return obs;
  }
  step.done(`cluster version ${to} (${o.now() - t0} ms)`);
  return seen;
}

/** The v2 store measured on a healthy member while its v2 API answers. */
export async function measureV2(o: Pick<LadderOptions, Reach>, obs: ClusterObservation): Promise<HopFacts['v2']> {
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
  o: Pick<LadderOptions, 'driver'>,
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
  const can = capabilitiesOf(o.driver);
  if (o.driver?.dataLayout) {
    const l = await o.driver.dataLayout(m).catch((err: Error) => ({ why: `${err.message}; fix the data-dir template (or --on-host)` }));
    // members whose program keeps no etcd data of its own: an empty data dir is theirs, what is put in it is judged as etcd's
    out.layout =
      !can.etcdData && !('why' in l) && !l.exists ? { why: `${m.name} is a ${can.what} member: its data dir ${l.dir} holds no etcd data (no member/)` } : l;
  }
  if (placeOf(o.driver).startsHere && m.dataDir && can.etcdData) {
    try {
      out.dataDir = { dir: m.dataDir, mode: statSync(m.dataDir).mode };
    } catch (err) {
      out.dataDir = { why: `${m.dataDir}: ${(err as Error).message}` };
    }
  } else if (!can.etcdData) out.dataDir = { why: `a ${can.what} member keeps no etcd data dir` };
  else out.dataDir = { why: "the data dir is on the member's host: its mode is not read from here (there: stat -c %a DIR)" };
  return out;
}

export interface Binaries {
  dir?: string;
  version?: string | { why: string };
  /** No binary given for a rolling restart on the members' own version: each member's running binary (read from /proc, or the sandbox's). */
  running?: boolean;
}

/** The version of the binary `bins:` names on the hosts, asked on every member's host: one version, or why not. */
async function hostsBinaryVersion(o: Pick<LadderOptions, 'cluster' | 'driver'>, t: string, path: string): Promise<string | { why: string }> {
  const said = await Promise.all(o.cluster.members.map(async (m) => ({ m: m.name, v: await o.driver!.binaryVersion!(m, { version: t }) })));
  const why = said.find((s) => 'why' in s.v);
  if (why && 'why' in why.v) return { why: `${path} on ${why.m}'s host (bins: in the cluster file): ${why.v.why}` };
  const versions = [...new Set(said.map((s) => ('version' in s.v ? s.v.version : '')))];
  if (versions.length > 1)
    return {
      why: `${path} (bins: in the cluster file) is not one version on every host: ${said.map((s) => `${s.m} ${'version' in s.v ? s.v.version : '?'}`).join(', ')}`,
    };
  return versions[0]!;
}

/**
 * Each hop's binaries: `--target-bin VERSION=DIR`, else the release cache, else (simulated members)
 * the release the simulated member stands for. A real cluster without a binary for a hop, a binary
 * of another minor, or a --target-bin for no hop of the ladder is refused before anything stops.
 */
export async function hopBinaries(
  o: Pick<LadderOptions, BinarySources>,
  hops: Hop[],
  early?: EarlyVersions,
  /** The targets of the hops a resumed ladder has finished: their --target-bin (valid when the run began) is accepted and ignored. */
  finished: string[] = [],
): Promise<{ bins: Record<string, Binaries>; reasons: string[]; notes: string[] }> {
  const reasons: string[] = [];
  const notes: string[] = [];
  const bins: Record<string, Binaries> = {};
  const own = capabilitiesOf(o.driver).releases;
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
    if (!targets.includes(v) && finished.includes(v)) {
      notes.push(`--target-bin ${v}=${given[v]}: the hop to ${v} is done; not used by this run`);
      delete given[v];
    } else if (!targets.includes(v)) reasons.push(`--target-bin ${v}=${given[v]}: no hop of this ladder goes to ${v} (its hops go to ${targets.join(', ')})`);
  }
  const asked: Array<{ t: string; dir: string; v: ReturnType<typeof binaryVersion> }> = [];
  for (const t of targets) {
    if (own) {
      bins[t] = { version: own[t] };
      continue;
    }
    const dir = given[t] ?? o.releaseDir?.(t);
    if (!dir && o.sameVersion) {
      bins[t] = { running: true, version: { why: "each member's own running binary (a rolling restart on its version)" } };
      continue;
    }
    const onHosts = dir ? undefined : o.driver?.hostBinary?.(t);
    if (onHosts && o.driver?.binaryVersion) {
      // (the cluster file's bins: names the binary on the hosts: its version asked there, on every member's host)
      bins[t] = { version: await hostsBinaryVersion(o, t, onHosts) };
      continue;
    }
    if (!dir) {
      if (o.driver?.etcdFromDir) {
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
  return { bins, reasons, notes };
}

/** Where a hop's facts are read from: the cluster as looked at, the hops' binaries, the trials' findings. */
export interface HopAt {
  obs: ClusterObservation;
  bins: Record<string, Binaries>;
  /** The cluster's v2 data, as measured for the ladder. */
  v2?: HopFacts['v2'];
  /** The hop starts from the cluster as it runs now (the first hop, or a resumed one), not from a later state. */
  current: boolean;
  /** A patch hop on the target's minor is planned after this one. */
  patchPlanned?: boolean;
  trials?: Map<string, TrialFinding[]>;
  /** The hop's data reads, begun earlier (hopReads): not read again. */
  reads?: HopReads;
  /**
   * Inside a rehearsal's clone, its plan's first hop: the run that rehearses read the leader's v3 store for
   * this hop on the same data (beside the copy it made of it), so the clone takes no snapshot of it again.
   */
  judgedBeforeCopy?: boolean;
  /**
   * Inside a rehearsal's clone, its plan: what the run that rehearses read of the same data for each hop's plan
   * (rehearsal/clone.ts JUDGED), taken for this hop's reads instead of reading the copy again; a hop it does
   * not name, or no word from it, is read here.
   */
  judged?: Promise<JudgedReads | undefined>;
}

/** The facts of one hop: each member's settings and data dir, auth, the v2 store, etcdutl's verdict. */
export async function hopFacts(o: Pick<LadderOptions, 'cluster' | 'driver' | 'debug' | Snapshotting>, hop: Hop, at: HopAt): Promise<HopFacts> {
  const { obs, bins, v2, current, patchPlanned, trials, reads, judgedBeforeCopy, judged } = at;
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
    patchHopPlanned: Boolean(patchPlanned),
    startsFrom: typeof before === 'string' ? before : undefined,
    trials: trialFacts(trials, hopName(hop)),
    dataTrials: dataTrialFacts(trials, hopName(hop)),
  };
  const told = judged && (await judged)?.get(hopName(hop));
  if (told)
    o.debug?.(
      `[kv] ${hopName(hop)}: the members' data as the run that rehearses read it for its plan (${Object.keys(told).join(', ') || 'nothing'}), not read again`,
    );
  return { ...facts, ...(reads ?? (await hopReads(o, hop, { obs, bins, current, trials, judgedBeforeCopy, ...(told ? { told } : {}) }))) };
}

/**
 * The clone's answer for the v3 store's membership on its first hop: a finding of the run that rehearses
 * (its own rows refuse where it found a mark; a ConfChange is not what a rehearsal's seconds bring), read
 * there from a snapshot of the whole store (at 100 MB, 2.5 s the clone's run no longer spends).
 */
const JUDGED_BEFORE_COPY = {
  why: "read by the run that rehearses this one, from a snapshot of the cluster's leader beside the copy of this data",
  none: true,
} as const;

/** The facts of a hop that read the members' data (a snapshot of the leader, etcdutl or the WAL on each host): the slow part of hopFacts. */
export type HopReads = Pick<HopFacts, 'v2store' | 'walReplay' | 'v3Membership'>;

/** A hop's reads of the members' data that the rehearsal's clone would make again of its copy (etcdutl, the WAL): what it is told instead. */
export type DataReads = Pick<HopFacts, 'v2store' | 'walReplay'>;

/** A hop's facts' data reads, as the rehearsal's clone is told them. */
export function readsOf(f: HopFacts): DataReads {
  return { ...(f.v2store ? { v2store: f.v2store } : {}), ...(f.walReplay ? { walReplay: f.walReplay } : {}) };
}

/**
 * A hop's reads of the members' data. The ladder begins them for the next hop while this one waits for
 * its cluster version (every member already runs this hop's target, and the wait only lets etcd's leader
 * raise the version: a v2 entry of etcd's own, no ConfChange, no v3 write), so the next hop finds them
 * done (at 100 MB, 1.3-1.9 s for the leader's snapshot and 1.7 s for etcdutl on three hosts). `told`: the
 * data reads of the run that rehearses (inside its clone), not made again; `onData`: given the data reads once made.
 */
export async function hopReads(
  o: Pick<LadderOptions, 'cluster' | 'driver' | 'debug' | Snapshotting>,
  hop: Hop,
  {
    obs,
    bins,
    current,
    trials,
    judgedBeforeCopy,
    told,
    onData,
  }: Pick<HopAt, 'obs' | 'bins' | 'current' | 'trials' | 'judgedBeforeCopy'> & { told?: DataReads; onData?: (d: DataReads) => void },
): Promise<HopReads> {
  const v2Gone = hop.patch ? undefined : ladderRow(hop.to)?.v2Gone;
  // What 3.5.26+ and 3.6 make of the v3 store's membership (v3-membership.ts): read on the cluster as it is when the hop starts
  // (for a later hop of a ladder: as the hop before waits for its cluster version, every member already on this hop's start).
  // (members whose program keeps no etcd data: known to keep no v3 store on every hop, so the plan says so once, not "when the hop starts")
  const membership =
    (current || !capabilitiesOf(o.driver).etcdData) && !hop.patch && ((hop.from === '3.4' && hop.to === '3.5') || (hop.from === '3.5' && hop.to === '3.6'))
      ? judgedBeforeCopy
        ? Promise.resolve(JUDGED_BEFORE_COPY)
        : v3MembershipFacts(o, obs)
      : undefined;
  const data = told ? Promise.resolve(told) : dataReads(o, hop, { bins, current, trials, v2Gone });
  void data.then(onData, () => undefined);
  // (both at once: the leader's snapshot streams from etcd while etcdutl reads each host's data dir)
  const [d, v3] = await Promise.all([data, membership]);
  return { ...d, ...(v3 ? { v3Membership: v3 } : {}) };
}

/** etcdutl's check v2store on each member before a 3.6 hop (a later hop's too), the WAL's v2 requests before a current 3.7 hop. */
async function dataReads(
  o: Pick<LadderOptions, 'cluster' | 'driver' | 'debug' | Snapshotting>,
  hop: Hop,
  { bins, current, trials, v2Gone }: Pick<HopAt, 'bins' | 'current' | 'trials'> & { v2Gone?: string },
): Promise<DataReads> {
  if (v2Gone === 'any' && current) return { walReplay: await walReplayOf(o) };
  if (v2Gone !== 'custom') return {};
  // Before the ladder's first stop too (a later hop): what the members' data dirs hold now, so the
  // plan says whether the fix will run, or why it cannot be told, before anything stops.
  const dirs: Record<string, string | undefined> = { given: binDirOf(bins[hop.from]?.dir, o.driver, hop.from) };
  for (const m of o.cluster.members) dirs[m.name] = o.driver?.current(m)?.binDir;
  const store = await checkV2store(o, dirs, trials?.get(hopName(hop)));
  return store ? { v2store: store } : {};
}

/**
 * A plan's reads of one hop begun at once, beside the trials, the data reads given to `onData` once made (the
 * rehearsal's clone is told them sooner, kv/rehearsal/clone.ts JUDGED): where nothing of them needs a trial, i.e.
 * every driver but one whose etcdutl runs on the members' hosts and that cannot read their data dirs there but from
 * each member's trial (the command driver reads them from the running process); undefined there. Handed to hopFacts as its `reads`.
 */
export function readsBeforeTrials(
  o: Pick<LadderOptions, 'cluster' | 'driver' | 'debug' | Snapshotting>,
  hop: Hop,
  at: Pick<HopAt, 'obs' | 'bins' | 'current' | 'judgedBeforeCopy'> & { onData?: (d: DataReads) => void; after?: Promise<void> },
): Promise<HopReads> | undefined {
  if (placeOf(o.driver).hostTemplates && !o.driver?.hostDataDirs) return undefined;
  // (`after`: the rehearsal's copy first, the members paused for it no longer than the copy itself takes)
  const reading = (at.after ?? Promise.resolve()).then(() => hopReads(o, hop, at));
  // (awaited by the plan's hopFacts: a failure is thrown there, not unhandled meanwhile)
  reading.catch(() => undefined);
  return reading;
}

/** A hop's member plan as the executor will run it (later hops: the members as they will be then). */
export function hopPlanText(obs: ClusterObservation, hop: Hop, { first, settle, noBackup }: { first: boolean; settle: string; noBackup: boolean }): string {
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
  const can = capabilitiesOf(o.driver);
  if (!can.etcdData) return `settle auto: each ${can.what} member's v2 size`;
  const ways: string[] = [];
  const d = o.cluster.driver;
  const place = placeOf(o.driver);
  const onHosts = place.hostTemplates && o.cluster.members.every((m) => (o.driver as { measuresV2?(m: MemberSpec): boolean }).measuresV2?.(m));
  if (place.hostTemplates && d && 'v2Size' in d && d.v2Size) ways.push("the v2-size template on each member's host");
  if (compareMinor(hop.from, '3.3') <= 0) ways.push("each member's v2 key tree over its v2 API");
  else ways.push("each member's v2 key tree over its v2 API where enable-v2 is on");
  if (v2 && 'bytes' in v2) ways.push(`the ${v2.bytes} bytes ${v2.on}`);
  if (onHosts) ways.push("each member's newest v2 snapshot file on its host (else the v2 writes its WAL holds, v3 requests not counted)");
  if (place.startsHere) ways.push("its newest member/snap/*.snap, else its WAL's v2 writes");
  else if (!(v2 && 'bytes' in v2) && compareMinor(hop.from, '3.4') >= 0 && !onHosts && !ways.some((w) => w.startsWith('the v2-size')))
    return "settle auto: v2 data size not checked: a 3.4+ member serves no v2 API unless enable-v2, its data dir is on its host and opsctl has no way there (a trial template such as 'ssh {host} sudo sh -s', or driver.v2Size / --v2-size-cmd); the guide's rule applies: 2 minutes between members";
  return `settle auto: the guide's 2 minutes between members only over 50 MB of v2 data, sized by ${ways.join(', else ')}`;
}

/**
 * A member of the cluster's list that was not given is refused before the checks and trials (they
 * would judge only the members given): the whole cluster first. A list that cannot be read is left to
 * the pre-flight, which says so with the planner's reasons.
 */
export async function wholeClusterFirst(o: Pick<LadderOptions, Look>, obs: ClusterObservation): Promise<void> {
  const membership = await readMembership(obs.members, { session: o.session, timeoutMs: o.timeouts.requestMs, debug: o.debug });
  if ('error' in membership) return;
  const whole = await membershipProblems(o.cluster, obs.members, membership, o.session, o.timeouts.requestMs);
  if (whole.length) throw new UpgradeRefused(whole, 'fix the cluster first; nothing was changed');
}
