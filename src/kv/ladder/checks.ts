/** Each hop's rulebook and trial starts, judged together before the first stop; the v2store fix they may plan; the refusal that names every reason. */
import { UpgradeRefused } from '../upgrade/options.js';
import { hopName, type Hop } from './plan.js';
import { nextMinor } from '../cluster/parse.js';
import { checkHop } from '../rules/index.js';
import { PROOF_RULES } from '../rules/trial.js';
import { fixOf } from '../rules/summary.js';
import type { CheckRow, HopFacts } from '../rules/types.js';
import type { ClusterObservation } from '../cluster/types.js';
import { fixV2store, type Fixing } from '../v2fix/v2store-fix.js';
import { fixProgressWords, unfinishedV2Fix } from '../v2fix/v2store-fix-file.js';
import { binDirOf, etcdutlIn, walReplayOf } from '../v2fix/v2store-check.js';
import { defaultSnapshotCount, writePast, writePastWords } from '../v2fix/write-past.js';
import { LADDER_MINORS, ladderRow } from '@opsctl/shared/etcd-ladder.js';
import { dataKey, hopDataTrials, hopTrials, type TrialHop } from '../trial/hops.js';
import { byRehearsal, byTheRehearsal, cloneFindings } from './rehearsal.js';
import type { DataStart, TrialFinding, TrialJob } from '../trial/run.js';
import { capabilitiesOf, type SettingsReads } from '../drivers/driver.js';
import { type Binaries, hopBinaries, hopFacts, hopReads, look, type HopAt, type HopReads } from './facts.js';
import { type BinarySources, type LadderOptions, type LadderReport, type Overrides, type Trying } from './record.js';
import type { Snapshotting } from '../upgrade/options.js';
import { isResumable, journalPath, memberMayBeDown } from '../journal/journal.js';
import { readJournal } from '../journal/read.js';
import type { JournalWithRuns } from '../journal/runs.js';
import { onTargetOf, PROOF_REUSE_MS, recordedProofs, trialHops } from './proofs.js';

/**
 * The trials of `hops` (src/kv/trial), all at once: each member's settings on each hop's binary (`prior`
 * stands where the settings did not change), and each member's data through every hop's binary in turn
 * (a data finding of `prior` that passed stands; one left for later runs now). None of a member on a
 * hop's target already (`seen`), and none the run this one resumes passed lately (ladder/proofs.ts;
 * `since`: a ladder's start, the oldest its hop's journal may be).
 */
export async function trialsOf(
  o: Pick<LadderOptions, Trying | 'now'> & Partial<Pick<LadderOptions, 'rehearse' | 'inClone'>>,
  hops: Hop[],
  bins: Record<string, Binaries>,
  prior?: Map<string, TrialFinding[]>,
  look?: { seen?: ClusterObservation; since?: string; resuming?: boolean; rehearsalKept?: boolean },
): Promise<Map<string, TrialFinding[]>> {
  const at = new Date(o.now()).toISOString();
  const list: TrialHop[] = trialHops(hops, bins);
  // Inside the clone the run is the trial (each member started as the cluster's will be); where the plan is
  // rehearsed, the rehearsal on the clone proves the data, not one copy per member alone (kv/rehearsal).
  const proofBy = byRehearsal(o, look);
  if (proofBy === 'clone') return cloneFindings(o.cluster.members, list, at);
  // A kept verdict of this same plan (the members' start settings and the binaries unchanged, kv/rehearsal/verdict.ts):
  // its clone started every member with these settings on every hop's binary, so no trial start runs again (the
  // settings trials' 1-3 s were the real run's longest wait before its first stop)
  if (proofBy === 'rehearsal' && look?.rehearsalKept)
    return new Map(
      list.flatMap((h) =>
        [h.name, dataKey(h.name)].map((k): [string, TrialFinding[]] => [k, byTheRehearsal(o.cluster.members, h.name).map((f) => ({ ...f, at }))]),
      ),
    );
  const stopped = stoppedByJournal(o);
  // (one round of reads: each member's process is read once on its host for every trial of this call)
  const reads: SettingsReads = new Map();
  const onTarget = onTargetOf(look?.seen);
  const base = {
    driver: o.driver,
    members: o.cluster.members,
    timeoutS: o.trialTimeoutS ?? 30,
    debug: o.debug,
    reads,
    onTarget,
    ...(stopped ? { stopped } : {}),
  };
  // (this process's findings first; the resumed run's recorded verdicts where this one has none; a member
  // that run left down is judged by its journal's checks, below)
  const recorded = await recordedProofs(o, list, reads, { since: look?.since, except: stopped?.member });
  const known = new Map(recorded);
  for (const [k, v] of prior ?? []) known.set(k, [...v, ...(recorded.get(k) ?? []).filter((r) => !v.some((x) => x.member === r.member))]);
  // (the data trials of members whose earlier data findings all passed are not run again)
  const passed = (m: string) => list.every((h) => known.get(dataKey(h.name))?.find((t) => t.member === m)?.result === 'ok');
  const again = o.cluster.members.filter((m) => !passed(m.name));
  const credentials = o.session.conn.auth;
  // Members on this machine are asked with opsctl's own client certificate (its paths are valid here): the
  // identity the operator gave, which 3.2 takes from the certificate's CN before any token (a member's own
  // server certificate would name no user). On other hosts the member's own files, as before.
  const here = o.driver && (o.driver.type === 'local' || o.cluster.members.every((m) => o.driver!.runsHere?.(m)));
  const t = o.session.conn.tls;
  const tls =
    here && t && (t.cacert || (t.cert && t.key))
      ? { ...(t.cacert ? { cacert: t.cacert } : {}), ...(t.cert && t.key ? { cert: t.cert, key: t.key } : {}) }
      : undefined;
  const dataTrials =
    again.length && !proofBy
      ? hopDataTrials(
          {
            ...base,
            members: again,
            ...(credentials ? { credentials } : {}),
            ...(tls ? { tls } : {}),
          },
          list,
        )
      : Promise.resolve(new Map<string, TrialFinding[]>());
  // A settings trial whose start the member's data trial of the same hop makes (the same binary and
  // settings, trial/run.ts) waits for it and is not run again; one that data trial does not prove starts
  // at once, or once the data trial did not get through its start.
  const starts = dataTrials.then((m) => new Map([...m.values()].flat().map((t): [string, DataStart] => [`${t.hop}\0${t.member}`, t as DataStart])));
  const dataStart = (job: TrialJob) => starts.then((m) => m.get(`${job.hop}\0${job.member.name}`));
  const [settings, data] = await Promise.all([
    // (each member's settings trial runs beside the rehearsal too: it names a refused setting in etcd's own words, in a second)
    hopTrials({ ...base, dataStart }, list, known),
    dataTrials,
  ]);
  for (const h of list) {
    const fresh = data.get(dataKey(h.name)) ?? [];
    const kept = known.get(dataKey(h.name)) ?? [];
    settings.set(
      dataKey(h.name),
      proofBy
        ? byTheRehearsal(o.cluster.members, h.name)
        : o.cluster.members.map((m) => fresh.find((t) => t.member === m.name) ?? kept.find((t) => t.member === m.name)!).filter(Boolean),
    );
  }
  // (what ran now is stamped with this round's start; a finding that stands keeps the time of its own trial)
  for (const f of [...settings.values()].flat()) f.at ??= at;
  return settings;
}

/** A hop's settings and trials, then its reads of the members' data (facts.ts hopReads), begun ahead: while the hop before waits for its cluster version. */
export interface Ahead {
  trials?: Promise<Map<string, TrialFinding[]>>;
  reads?: Promise<HopReads>;
}

/** Begins `hop`'s reads on the cluster as it is now (every member on the target of the hop before); awaited before `hop`, or as the run ends. */
export function readAhead(
  o: Pick<LadderOptions, Trying | Snapshotting | 'now'>,
  hop: Hop,
  bins: Record<string, Binaries>,
  prior: Map<string, TrialFinding[]>,
): Ahead {
  o.debug?.(`[kv] ${hopName(hop)}: its settings, trials and data reads begun while the hop before waits for its cluster version`);
  const trials = trialsOf(o, [hop], bins, prior);
  const reads = trials.then(async (again) => hopReads(o, hop, { obs: await look(o), bins, current: true, trials: again }));
  trials.catch(() => undefined);
  reads.catch(() => undefined);
  return { trials, reads };
}

/**
 * The member the recorded run stopped and did not start again (the journal is the truth on resume: a
 * member down is the one it stopped), with the hop it was in and the checks recorded before that stop.
 */
export function stoppedByJournal(o: Pick<LadderOptions, 'dataDir' | 'cluster'>): { member: string; hop: string; recorded: CheckRow[] } | undefined {
  let j;
  try {
    j = readJournal(journalPath(o.dataDir, o.cluster.key));
  } catch {
    return undefined; // (the executor names a journal it cannot use)
  }
  if (!isResumable(j)) return undefined;
  const member = memberMayBeDown(j);
  if (!member) return undefined;
  // (named as the trials' hops are: the patch mark kept)
  const hop = hopName({ from: j.source, to: j.target, patch: Boolean(j.allowSameVersion && j.source === j.target) });
  return { member, hop, recorded: (j as JournalWithRuns).checks ?? [] };
}

/** A hop's rules over its facts, with the refusals of the rules named by --ignore-check, and the members --skip-trial names, shown as warnings. */
export async function check(o: Pick<LadderOptions, Overrides>, facts: HopFacts): Promise<CheckRow[]> {
  const rows = await checkHop(facts);
  const ignore = new Set(o.ignoreChecks ?? []);
  const skip = new Set(o.skipTrial?.members ?? []);
  return rows.map((r): CheckRow => {
    if (PROOF_RULES.has(r.rule) && r.member && skip.has(r.member) && (r.status === 'refuse' || r.status === 'not checked')) {
      const { fix: _fix, ...rest } = r;
      return { ...rest, status: 'warn', detail: `not proven, skipped by --skip-trial ${r.member} (${o.skipTrial!.reason}): ${r.detail}` };
    }
    return ignore.has(r.rule) && r.status === 'refuse' ? { ...r, status: 'warn', detail: `ignored (--ignore-check ${r.rule}): ${r.detail}` } : r;
  });
}

/** Every hop's checks, with the v2 store measured for the 3.4 and 3.5 rules. */
export async function checkAll(
  o: Pick<LadderOptions, 'cluster' | 'driver' | Overrides | Snapshotting> & Partial<Pick<LadderOptions, 'inClone'>>,
  hops: Hop[],
  { obs, bins, v2, fromHop, trials }: Pick<HopAt, 'obs' | 'bins' | 'v2'> & { fromHop: number; trials: Map<string, TrialFinding[]> },
) {
  // A patch hop inside a hop's source minor (3.5.x → 3.5.32+ before 3.6, 3.6.x → 3.6.11+ before 3.7) is planned first.
  const patchPlanned = (h: Hop) => !h.patch && hops.some((x) => x.patch && x.from === h.from);
  // Every hop at once (each only looks: config reads, etcdutl on the data dirs).
  return Promise.all(
    hops.map(async (h, i) =>
      i < fromHop
        ? []
        : check(
            o,
            await hopFacts(o, h, {
              obs,
              bins,
              v2,
              current: i === fromHop,
              patchPlanned: patchPlanned(h),
              trials,
              judgedBeforeCopy: Boolean(o.inClone) && i === fromHop,
            }),
          ),
    ),
  );
}

/** Whether the members' data dirs are checked (and fixed) for what is left of the v2 store before a hop's first start (the ladder's table). */
export const fixesBefore = (h: Hop): boolean => !h.patch && ladderRow(h.to)?.v2Gone !== undefined;

/** The plan's line on the v2 step before a hop's first start (3.6: etcdutl check v2store; 3.7: each WAL read): planned (and how), refused instead, or not possible here. */
export function v2fixPlan(o: Pick<LadderOptions, 'driver' | 'fixV2store'>, h: Hop = { from: '3.5', to: '3.6', patch: false }): string {
  const can = capabilitiesOf(o.driver);
  if (ladderRow(h.to)?.v2Gone === 'any') {
    const read = `before the first ${h.to} start: each member's WAL read for v2 requests after its newest snapshot (${h.to} cannot replay them)`;
    if (!can.etcdData) return `${read}: ${can.what} members keep no WAL (nothing to read)`;
    if (o.driver?.type !== 'local')
      return o.fixV2store
        ? `before the first ${h.to} start: every member written past, no stop (the WALs are on the hosts, not read from here): raft entries that carry no key and no revision until each member saves a new snapshot (its /metrics), about ${defaultSnapshotCount(h.from).toLocaleString('en-US')} on ${h.from}; then ${h.to} replays nothing older`
        : `${read}: not possible from here (the WALs are on the hosts; --no-fix-v2store: not written past either); a member that needs it halts at its start, put back with --on-failure rollback`;
    if (!o.fixV2store) return `${read}; a member with some refuses the hop (--no-fix-v2store)`;
    return `${read}; a member with some is restarted once on ${h.from} with snapshot-count 1, one at a time with the usual gate, snapshot and backup (journalled: a re-run finishes it), then read again`;
  }
  const check = 'before the first 3.6 start: etcdutl check v2store on every member';
  if (!can.etcdData) return `${check}: ${can.what} members keep no etcd data dir (nothing to check)`;
  if (o.driver?.type === 'command')
    return `${check}, on its host (the trial template, the etcdutl beside the 3.5 binary there): ${
      o.fixV2store
        ? `a member with custom v2 content in its WAL is written past, no stop: raft entries that carry no key and no revision until it saves a new snapshot (its /metrics), about ${defaultSnapshotCount('3.5').toLocaleString('en-US')} on 3.5 (etcd's default snapshot-count); then checked again (content in the v2 store itself refuses the hop, with the guide's fix)`
        : "custom v2 content found there refuses the hop before the first 3.6 start, with the guide's fix (--no-fix-v2store)"
    }`;
  if (o.driver?.type !== 'local')
    return `${check}: not possible from here (no driver reaches the data dirs): run etcdutl check v2store --data-dir DIR on each host first`;
  if (!o.fixV2store) return `${check}; custom v2 content refuses the hop (--no-fix-v2store)`;
  return `${check}; a member with custom v2 content is restarted once on 3.5 with snapshot-count 1, one at a time with the usual gate, snapshot and backup (journalled: a re-run finishes it), then checked again`;
}

/** What --fix-v2store does before the 3.6 hop, as its rows say it. */
const FIX_WORDS =
  'the v2store fix (planned; --no-fix-v2store refuses instead): restarted once on 3.5 with snapshot-count 1 before the first 3.6 start (gate, snapshot, backup first), then checked again';

/** What --fix-v2store does before the 3.7 hop, as its rows say it. */
const WAL_FIX_WORDS =
  'the WAL fix (planned; --no-fix-v2store refuses instead): restarted once on 3.6 with snapshot-count 1 before the first 3.7 start (gate, snapshot, backup first), then its WAL read again';

/**
 * With --fix-v2store, a failing `etcdutl check v2store` (3.6) or a WAL 3.7 cannot replay is the fix's work
 * before the hop, not a refusal. `rows` are one hop's; `ladder` every hop's (a later hop's data trial
 * waits on an earlier hop's fix).
 */
export function planFix(o: Pick<LadderOptions, 'fixV2store' | 'driver' | 'cluster'>, rows: CheckRow[], ladder: CheckRow[] = rows): CheckRow[] {
  if (!o.fixV2store) return rows;
  const past = writesPast(o);
  const words = (r: CheckRow) => (past ? writePastWords(r.hop.split(' → ')[0]!) : r.rule === 'wal-v2-replay' ? WAL_FIX_WORDS : FIX_WORDS);
  // Where opsctl does not start the members itself, their WALs are on their hosts (not read from here): before
  // the first 3.7 start every member is written past, read or not (no stop: cheap, and never a start that panics).
  const expand = (r: CheckRow): CheckRow[] =>
    past && r.rule === 'wal-v2-replay' && !r.member && (r.status === 'before the hop' || r.status === 'not checked')
      ? o.cluster.members.map((m) => ({ ...r, member: m.name, status: 'before the hop' as const, detail: `its WAL is on its host (${r.detail}); ${words(r)}` }))
      : [r];
  const fixOne = (r: CheckRow): CheckRow => {
    // A data trial on a copy that etcd refused for the v2 requests in its WAL (what a start of the hop before
    // left there: a chained trial) is the same finding as the checks', written past before the hop where opsctl
    // does not start the members: the trial runs again after it.
    if (past && r.rule === 'data-trial' && r.status === 'refuse' && r.member && V2_WAL_PANIC.test(r.detail)) {
      const { fix: _fix, ...rest } = r;
      return { ...rest, status: 'before the hop' as const, detail: `${words(r)}; then tried again (before it: ${r.detail})` };
    }
    if ((r.rule !== 'v2store-check' && r.rule !== 'wal-v2-replay') || r.status !== 'refuse' || !r.member) return r;
    const { fix: _fix, ...rest } = r;
    return { ...rest, status: 'before the hop' as const, detail: `${r.detail.split('; fix:')[0]}; ${words(r)}` };
  };
  // (the ladder's rows are the hop's own when no other list is given: expanded once)
  const sameList = ladder === rows;
  rows = rows.flatMap(expand);
  ladder = sameList ? rows : ladder.flatMap(expand);
  const fixed = rows.map(fixOne);
  // The data trial of a member the fix will restart meets data the fix changes: it runs again after the fix.
  // So does a later hop's, not tried on the copy because the fixed hop's binary did not get through it:
  // each later hop tries its data again before its own first stop.
  const fixing = new Set(fixRows(fixed).map((r) => `${r.hop}\0${r.member}`));
  const fixedMembers = new Set(fixRows(ladder.map(fixOne)).map((r) => r.member));
  const later = (r: CheckRow) => r.status === 'not checked' && fixedMembers.has(r.member) && /not tried: /.test(r.detail);
  return fixed.map((r) => {
    if (r.rule !== 'data-trial' || !(fixing.has(`${r.hop}\0${r.member}`) || later(r)) || (r.status !== 'refuse' && r.status !== 'not checked')) return r;
    const { fix: _fix, ...rest } = r;
    return { ...rest, status: 'before the hop', detail: `tried again once the fix above is done (before it: ${r.detail})` };
  });
}

export const fixRows = (rows: CheckRow[]) =>
  rows.filter(
    (r) =>
      r.member &&
      ((r.rule === 'v2store-check' && r.detail.includes(FIX_WORDS)) ||
        (r.rule === 'wal-v2-replay' && r.detail.includes(WAL_FIX_WORDS)) ||
        ((r.rule === 'v2store-check' || r.rule === 'wal-v2-replay' || r.rule === 'data-trial') && r.detail.startsWith(WRITTEN_PAST)) ||
        ((r.rule === 'v2store-check' || r.rule === 'wal-v2-replay') && r.detail.includes(WRITTEN_PAST))),
  );

/** etcd's words at a start on v2 requests in its WAL: 3.6 ("detected disallowed v2 WAL for stage …"), 3.7 ("unmarshal should never fail"). */
const V2_WAL_PANIC = /detected disallowed v2 WAL|unmarshal should never fail/;

/**
 * The members are written past (write-past.ts) where opsctl does not start them itself (the command driver and its presets)
 * and their program keeps etcd's WAL (one that keeps none has nothing to write past).
 */
export const writesPast = (o: Pick<LadderOptions, 'driver'>): boolean => Boolean(o.driver && o.driver.type !== 'local' && capabilitiesOf(o.driver).etcdData);
const WRITTEN_PAST = 'written past, no stop';

/**
 * Before the 3.5 → 3.6 hop's first stop: the fix for the members its rows name (or the unfinished
 * fix a killed run left), then the hop's checks again on the cluster as the fix left it. Undefined
 * when there is nothing to fix.
 */
export async function runFix(
  o: Pick<LadderOptions, Fixing | Trying | Overrides>,
  hop: Hop,
  rows: CheckRow[],
  bins: Record<string, Binaries>,
  v2: HopFacts['v2'],
  trials?: Map<string, TrialFinding[]>,
): Promise<CheckRow[] | undefined> {
  // 3.6 (custom v2 content, etcdutl's check) is fixed on 3.5; 3.7 (any v2 request in the WAL, read here) on 3.6
  const wal = ladderRow(hop.to)?.v2Gone === 'any';
  const minor = hop.from;
  const members = fixRows(rows).map((r) => r.member!);
  if (writesPast(o)) {
    // The member the resumed run stopped in this hop was written past by that run before its first stop, and
    // nothing has written to its WAL since (it is down): the drive is for the members that run.
    const stopped = stoppedByJournal(o);
    const down = stopped && stopped.hop === hopName(hop) && members.includes(stopped.member) ? stopped.member : undefined;
    const named = o.cluster.members.filter((m) => members.includes(m.name) && m.name !== down);
    if (down)
      o.reporter.note(
        `written past on ${minor}: not ${down}, stopped by the run this one resumes after it wrote past every member; its WAL has not changed since`,
      );
    if (!named.length) return undefined;
    await writePast(o, named, minor);
    return checkAgain(o, hop, bins, v2, trials);
  }
  const pending = unfinishedV2Fix(o.dataDir, o.cluster.key, minor);
  if (!pending && !members.length) return undefined;
  const dirs: Record<string, string | undefined> = { given: binDirOf(bins[minor]?.dir, o.driver, minor) };
  for (const m of o.cluster.members) dirs[m.name] = o.driver?.current(m)?.binDir;
  const etcdutl = wal ? '' : etcdutlIn(dirs);
  if (!o.driver || etcdutl === undefined)
    throw new UpgradeRefused([`--fix-v2store: no etcdutl beside the ${minor} binaries to check the fix with`], 'nothing was changed');
  o.reporter.note(
    pending
      ? `--fix-v2store: finishing the fix recorded for ${fixProgressWords(pending)}`
      : `--fix-v2store: ${members.join(', ')} restarted once on ${minor} with snapshot-count 1, one at a time, before the hop`,
  );
  const walCheck = async (m: { name: string; dataDir?: string }) => {
    const r = await walReplayOf({ cluster: { ...o.cluster, members: o.cluster.members.filter((x) => x.name === m.name) }, driver: o.driver });
    const w = r && !('why' in r) ? r[0] : undefined;
    return {
      member: m.name,
      ok: w?.count === 0,
      said: w ? `${w.count} v2 requests in its WAL after its newest snapshot (index ${w.snapshotIndex})` : r && 'why' in r ? r.why : 'its WAL was not read',
    };
  };
  await fixV2store(o, o.driver, { members, minor, etcdutl, ...(wal ? { check: walCheck } : {}) });
  return checkAgain(o, hop, bins, v2, trials);
}

/** After a fix: the fixed members' data trials again, on the data the fix left (their settings trials stand), then the hop's checks. */
async function checkAgain(
  o: Pick<LadderOptions, Fixing | Trying | Overrides>,
  hop: Hop,
  bins: Record<string, Binaries>,
  v2: HopFacts['v2'],
  trials?: Map<string, TrialFinding[]>,
): Promise<CheckRow[]> {
  const again = await trialsOf(o, [hop], bins, trials);
  if (trials) for (const [k, v] of again) trials.set(k, v);
  return check(o, await hopFacts(o, hop, { obs: await look(o), bins, v2, current: true, trials: again }));
}

/**
 * Gives back what was taken, first: a v2 fix a killed run left unfinished (a member it stopped, or started on the
 * config it edited) is finished before anything is judged, so no check refuses the member that fix itself took
 * down (a data trial "did not answer a read"), and no config stays edited. A dry run only reads.
 */
export async function finishRecordedFixes(
  o: Pick<LadderOptions, 'dryRun' | 'dataDir' | 'cluster' | BinarySources>,
  fix: (hop: Hop, rows: CheckRow[], bins: Record<string, Binaries>, v2: undefined) => Promise<unknown>,
): Promise<void> {
  if (o.dryRun) return;
  for (const from of LADDER_MINORS) {
    const hop: Hop = { from, to: nextMinor(from), patch: false };
    if (!fixesBefore(hop) || !unfinishedV2Fix(o.dataDir, o.cluster.key, from)) continue;
    await fix(hop, [], (await hopBinaries(o, [hop])).bins, undefined);
  }
}

/** The rows that stop the ladder: refusals, a member not proven (the trials), and with --strict every check that could not run. */
export { blocking } from '../rules/summary.js';

export function reasonOf(r: CheckRow): string {
  const what =
    r.status !== 'not checked' ? `${r.detail}${fixOf(r)}` : PROOF_RULES.has(r.rule) ? `not proven: ${r.detail}` : `not checked (--strict): ${r.detail}`;
  return `${r.hop} [${r.rule}]${r.member ? ` member ${r.member}` : ''}: ${what} (${r.guide})`;
}

/**
 * Refuses with every blocking row, naming --strict's part, or --skip-trial's, when that is what refuses.
 * `shown`: the plan above it has just printed each row with its fix, so the message names each rule once
 * with its members (--json's `reasons` keep every row whole).
 */
export function refuseRows(rows: CheckRow[], { stopped, shown = false }: { stopped: boolean; shown?: boolean }): never {
  const unproven = [...new Set(rows.filter((r) => r.status === 'not checked' && PROOF_RULES.has(r.rule) && r.member).map((r) => r.member!))];
  const strictOnly = rows.some((r) => r.status === 'not checked' && !PROOF_RULES.has(r.rule));
  const ways = [
    ...(unproven.length
      ? [
          `a member is stopped only once its trials have run: give what each line names; to accept the risk for a member by name: --skip-trial ${unproven.join(',')} --skip-reason "WHY" (kept in the journal and the report)`,
        ]
      : []),
    ...(strictOnly ? ['or drop --strict to go ahead with the other checks that cannot run listed as such'] : []),
  ];
  const hint = stopped
    ? `nothing of this hop was stopped: fix what the checks name, then run the same command to resume the ladder${ways.length ? `; ${ways.join('; ')}` : ''}`
    : `nothing was stopped or changed: fix what the checks name, then run the same command${ways.length ? `; ${ways.join('; ')}` : ''} (a refusal you have judged wrong: --ignore-check RULE, the id in brackets)`;
  throw new UpgradeRefused(rows.map(reasonOf), hint, 'upgrade', shown ? namedOnce(rows) : undefined);
}

/** One line per hop, rule and verdict with the members it blocks, for a refusal whose rows the plan above showed. */
function namedOnce(rows: CheckRow[]): string[] {
  const by = new Map<string, string[]>();
  for (const r of rows) {
    const why = r.status !== 'not checked' ? 'refused' : PROOF_RULES.has(r.rule) ? 'not proven' : 'not checked (--strict)';
    const key = `${r.hop} [${r.rule}]\0${why}`;
    const members = by.get(key) ?? [];
    if (r.member && !members.includes(r.member)) members.push(r.member);
    by.set(key, members);
  }
  return [...by].map(([key, members]) => {
    const [rule, why] = key.split('\0');
    return `${rule}${members.length ? ` ${members.join(', ')}` : ''}: ${why} (each above, with its fix)`;
  });
}

/** How many trial starts there were, ran and refused (settings and data trials alike), and their wall time. */
export function trialCounts(trials: Map<string, TrialFinding[]>, ms: number): NonNullable<LadderReport['trials']> {
  const all = [...trials.values()].flat();
  const viaData = all.filter((t) => t.via === 'data').length;
  const reused = all.filter((t) => t.kept === 'journal').length;
  const onTarget = all.filter((t) => t.kept === 'on-target').length;
  const rehearsed = all.filter((t) => t.kept === 'rehearsal').length;
  return {
    starts: all.length,
    ran: all.filter((t) => t.result !== 'not-checked').length - rehearsed,
    refused: all.filter((t) => t.result === 'problem').length,
    ms,
    ...(viaData ? { viaData } : {}),
    ...(reused ? { reused } : {}),
    ...(onTarget ? { onTarget } : {}),
    ...(rehearsed ? { rehearsed } : {}),
  };
}

/** The plan's line on the trials: how many of each kind ran (at once), how long they took, how many refused, how many were not needed. */
export function trialSummary(trials: Map<string, TrialFinding[]>, ms: number): string {
  const kind = (which: 'data' | 'settings') => [...trials].filter(([k]) => k.endsWith(' (data)') === (which === 'data')).flatMap(([, v]) => v);
  const says = (list: TrialFinding[], what: string) => {
    const moot = list.filter((t) => t.detail.startsWith('does not apply')).length;
    const reused = list.filter((t) => t.kept === 'journal').length;
    const onTarget = list.filter((t) => t.kept === 'on-target').length;
    const rehearsed = list.filter((t) => t.kept === 'rehearsal').length;
    const ran = list.filter((t) => t.result !== 'not-checked').length - moot - reused - onTarget - rehearsed;
    const refused = list.filter((t) => t.result === 'problem').length;
    const viaData = list.filter((t) => t.via === 'data' && !t.kept).length;
    const via = viaData ? ` (${viaData} of them the start on a copy of the member's data below: the same binary and settings)` : '';
    const kept = [
      ...(reused
        ? [`${reused} passed in the run this one resumes (its journal: the same binary and settings, at most ${PROOF_REUSE_MS / 60_000} min ago)`]
        : []),
      ...(onTarget ? [`${onTarget} of members on the hop's target already`] : []),
      ...(rehearsed ? [`${rehearsed} proven by the rehearsal on a clone of the cluster instead`] : []),
    ];
    return `${ran} of ${list.length} ${what} ran${via}${refused ? ` (${refused} refused)` : ''}${moot ? ` (${moot} do not apply: simulated members keep no etcd data)` : ''}${kept.length ? ` (not run: ${kept.join('; ')})` : ''}`;
  };
  const t = trialCounts(trials, ms);
  const unchecked = t.starts - t.ran - (t.rehearsed ?? 0);
  return `Trials: ${says(kind('settings'), "starts with each member's settings")}, ${says(kind('data'), "starts on a copy of each member's data")} (every member on every hop's binary, at once) in ${ms} ms${unchecked > 0 ? `; ${unchecked} not checked` : ''}`;
}

export function strOf(v: string | { why: string } | undefined): string | undefined {
  return typeof v === 'string' ? v : undefined;
}
