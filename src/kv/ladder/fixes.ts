/** The v2 fix before the 3.6 and 3.7 hops (src/kv/v2fix), as the ladder plans it from the checks, runs it before the hop's first stop, and finishes one a kill left. */
import { check, stoppedByJournal } from './checks.js';
import { trialsOf } from './trials.js';
import { UpgradeRefused } from '../upgrade/options.js';
import { hopName, type Hop } from './plan.js';
import { nextMinor } from '../cluster/parse.js';
import type { CheckRow, HopFacts } from '../rules/types.js';
import { fixV2store, type Fixing } from '../v2fix/v2store-fix.js';
import { fixProgressWords, unfinishedV2Fix } from '../v2fix/v2store-fix-file.js';
import { binDirOf, etcdutlIn, walReplayOf } from '../v2fix/v2store-check.js';
import { defaultSnapshotCount, writePast, writePastWords } from '../v2fix/write-past.js';
import { LADDER_MINORS, ladderRow } from '@opsctl/shared/etcd-ladder.js';
import type { TrialFinding } from '../trial/run.js';
import { capabilitiesOf, placeOf } from '../drivers/driver.js';
import { type Binaries, hopBinaries, hopFacts, look } from './facts.js';
import { type BinarySources, type LadderOptions, type Overrides, type Trying } from './record.js';

/** Whether the members' data dirs are checked (and fixed) for what is left of the v2 store before a hop's first start (the ladder's table). */
export const fixesBefore = (h: Hop): boolean => !h.patch && ladderRow(h.to)?.v2Gone !== undefined;

/** The plan's line on the v2 step before a hop's first start (3.6: etcdutl check v2store; 3.7: each WAL read): planned (and how), refused instead, or not possible here. */
export function v2fixPlan(o: Pick<LadderOptions, 'driver' | 'fixV2store'>, h: Hop = { from: '3.5', to: '3.6', patch: false }): string {
  const can = capabilitiesOf(o.driver);
  if (ladderRow(h.to)?.v2Gone === 'any') {
    const read = `before the first ${h.to} start: each member's WAL read for v2 requests after its newest snapshot (${h.to} cannot replay them)`;
    if (!can.etcdData) return `${read}: ${can.what} members keep no WAL (nothing to read)`;
    if (!placeOf(o.driver).startsHere)
      return o.fixV2store
        ? `before the first ${h.to} start: every member written past, no stop (the WALs are on the hosts, not read from here): raft entries that carry no key and no revision until each member saves a new snapshot (its /metrics), about ${defaultSnapshotCount(h.from).toLocaleString('en-US')} on ${h.from}; then ${h.to} replays nothing older`
        : `${read}: not possible from here (the WALs are on the hosts; --no-fix-v2store: not written past either); a member that needs it halts at its start, put back with --on-failure rollback`;
    if (!o.fixV2store) return `${read}; a member with some refuses the hop (--no-fix-v2store)`;
    return `${read}; a member with some is restarted once on ${h.from} with snapshot-count 1, one at a time with the usual gate, snapshot and backup (journalled: a re-run finishes it), then read again`;
  }
  const check = 'before the first 3.6 start: etcdutl check v2store on every member';
  if (!can.etcdData) return `${check}: ${can.what} members keep no etcd data dir (nothing to check)`;
  if (placeOf(o.driver).hostTemplates)
    return `${check}, on its host (the trial template, the etcdutl beside the 3.5 binary there): ${
      o.fixV2store
        ? `a member with custom v2 content in its WAL is written past, no stop: raft entries that carry no key and no revision until it saves a new snapshot (its /metrics), about ${defaultSnapshotCount('3.5').toLocaleString('en-US')} on 3.5 (etcd's default snapshot-count); then checked again (content in the v2 store itself refuses the hop, with the guide's fix)`
        : "custom v2 content found there refuses the hop before the first 3.6 start, with the guide's fix (--no-fix-v2store)"
    }`;
  if (!placeOf(o.driver).startsHere)
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
export const writesPast = (o: Pick<LadderOptions, 'driver'>): boolean =>
  Boolean(o.driver && !placeOf(o.driver).startsHere && capabilitiesOf(o.driver).etcdData);
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
