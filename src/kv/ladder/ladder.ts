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
import { copyFileSync, existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { OpsError } from '../../core/errors.js';
import { requireDriver, runUpgrade } from '../upgrade/executor.js';
import { UpgradeRefused, type UpgradeReport } from '../upgrade/options.js';
import { journalPath, writeRecord } from '../journal/journal.js';
import { readJournal } from '../journal/read.js';
import { checkJournalPlan } from '../journal/plan.js';
import { restorePointOf } from '../upgrade/restore-point.js';
import { hopName, planLadder, type Hop } from './plan.js';
import { hopRows } from '../rules/index.js';
import { planFromJournal, resumesUpgrade } from './resume-plan.js';
import { minor } from '../cluster/parse.js';
import { ladderSummary, ladderText } from './plan-text.js';
import type { CheckRow, HopFacts } from '../rules/types.js';
import type { ClusterObservation } from '../cluster/types.js';
import type { TrialFinding } from '../trial/run.js';
import type { Binaries, EarlyVersions } from './facts.js';
import { askVersionsEarly, clusterVersionCaughtUp, hopBinaries, hopFacts, look, measureV2, wholeClusterFirst } from './facts.js';
import { proofsOf } from './proofs.js';
import { ladderResume } from './ladder-resume.js';
import { giveBackFirst } from './give-back.js';
import { besideRehearsal, finishRehearsal, startRehearsal } from './rehearsal.js';
import { single, type Climbing, type HopPorts, type Planning } from './single-hop.js';
import { type LadderFile, type LadderOptions, type LadderReport, ladderDir, ladderPath, lockLadder, readLadder } from './record.js';
import {
  type Ahead,
  blocking,
  check,
  checkAll,
  finishRecordedFixes,
  fixesBefore,
  planFix,
  readAhead,
  reasonOf,
  refuseRows,
  runFix,
  strOf,
  trialCounts,
  trialSummary,
  trialsOf,
} from './checks.js';

/**
 * The single-hop run with its rulebook checked first (`kv upgrade --to 3.4` on a 3.3 cluster; a rolling
 * restart with --allow-same-version is a hop onto the same minor), or the ladder when the target is
 * more than one hop away (or a ladder is recorded for this cluster).
 */
export async function runUpgradeOrLadder(o: LadderOptions): Promise<{ single: UpgradeReport; checks: CheckRow[] } | LadderReport> {
  requireDriver(o);
  const ports: HopPorts = {
    run: (hop) => runUpgrade({ ...o, ...hop }),
    fix: (hop, rows, bins, v2, trials) => runFix(o, hop, rows, bins, v2, trials),
  };
  await finishRecordedFixes(o, (hop, rows, bins, v2) => ports.fix(hop, rows, bins, v2));
  const file = ladderPath(o.dataDir, o.cluster.key);
  const recorded = o.sameVersion ? undefined : readLadder(file);
  if (recorded && recorded.status !== 'done') {
    if (recorded.to !== o.to) {
      throw new OpsError(`an unfinished upgrade ladder to ${recorded.to} of this cluster is recorded in ${file}`, 1, {
        code: 'journal_conflict',
        hint: `finish it with: opsctl kv upgrade --to ${recorded.to}   (or undo the hop in flight with: ${o.rollbackCommand})`,
      });
    }
    return runLadder(o, ports, { file, recorded });
  }
  // a journal opsctl cannot use is named (with its fix) before anything looks at the cluster, as a one-hop run always did
  const journal = journalPath(o.dataDir, o.cluster.key);
  const inFlight = existsSync(journal) ? readJournal(journal) : undefined;
  // a journal this tool could not have written is named (with its way out) before it plans anything
  if (inFlight && resumesUpgrade(inFlight, o.to)) checkJournalPlan(journal, inFlight, o.cluster.members, o.rollbackCommand);
  const early = askVersionsEarly(o);
  const seen = await look(o);
  if (inFlight && resumesUpgrade(inFlight, o.to)) await giveBackFirst(o, journal, inFlight, seen);
  const obs = inFlight || o.sameVersion ? seen : await clusterVersionCaughtUp(o, seen);
  await wholeClusterFirst(o, obs);
  const resuming = Boolean(inFlight && resumesUpgrade(inFlight, o.to));
  if (o.sameVersion) return single(o, ports, obs, { from: o.to, to: o.to, patch: true }, { early, resuming });
  // A hop in flight: planned from its journal (which member it stopped, which it finished), not from the members that answer.
  const plan = resumesUpgrade(inFlight, o.to) ? planFromJournal(obs, inFlight, o.to, journal) : planLadder(obs, o.to);
  if (!plan.ok) throw new UpgradeRefused(plan.reasons, 'fix the cluster first; nothing was changed');
  if (plan.hops.length <= 1) return single(o, ports, obs, plan.hops[0], { early, resuming });
  return runLadder(o, ports, { file, seen: obs, planned: plan.hops, early });
}

/** The ladder: plan (or resume), every hop's checks, one question, then hop after hop. */
async function runLadder(
  o: Pick<LadderOptions, Planning>,
  ports: HopPorts,
  { file, recorded, seen, planned, early }: { file: string; recorded?: LadderFile; seen?: ClusterObservation; planned?: Hop[]; early?: EarlyVersions },
): Promise<LadderReport> {
  const obs = seen ?? (await look(o));
  const hops: Hop[] = recorded ? recorded.hops.map((h) => ({ from: h.from, to: h.to, patch: h.patch })) : planned!;
  const at = recorded?.current ?? 0;
  if (recorded) {
    // The hop in flight must be where the cluster is (as its journal says it left it): a hop done by
    // hand, or a member elsewhere, is refused.
    const hopFile = journalPath(o.dataDir, o.cluster.key);
    const j = existsSync(hopFile) ? readJournal(hopFile) : undefined;
    const mine = j && j.createdAt >= recorded.createdAt && hops[at] && minor(j.target) === hops[at].to;
    if (mine && resumesUpgrade(j, o.to)) checkJournalPlan(hopFile, j, o.cluster.members, o.rollbackCommand);
    if (mine && resumesUpgrade(j, o.to)) await giveBackFirst(o, hopFile, j, obs);
    const plan = mine && resumesUpgrade(j, o.to) ? planFromJournal(obs, j, o.to, hopFile) : planLadder(obs, o.to);
    const hop = hops[at];
    if (!plan.ok) throw new UpgradeRefused(plan.reasons, `the ladder (${file}) was not resumed; nothing was changed`);
    // (killed after the hop's journal said done and before the ladder moved on: the hop is done, its run finds nothing to do)
    const lagging = mine && j.status === 'done' && plan.ok && plan.from === hop?.to;
    if (hop && plan.hops[0] && !lagging && (plan.hops[0].from !== hop.from || plan.hops[0].to !== hop.to)) {
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
  const { bins, reasons, notes } = await hopBinaries(
    { ...o, targetBins: { ...recordedBins, ...o.targetBins } },
    hops.slice(at),
    early,
    hops.slice(0, at).map((h) => h.to),
  );
  for (const n of notes) o.reporter.note(n);
  if (reasons.length) {
    await measuring.catch(() => undefined);
    throw new UpgradeRefused(reasons, 'nothing was changed: give each hop its binaries (--target-bin VERSION=DIR, repeatable)');
  }
  // Every member on every hop's binary, while the v2 store is measured (neither changes anything); the rehearsal begins beside them.
  const tried = o.now();
  const rehearsing = await startRehearsal(o, hops.slice(at), bins, { resuming: Boolean(recorded) });
  const { v2, trials, report, planText } = await besideRehearsal(rehearsing, async () => {
    const trying = trialsOf(o, hops.slice(at), bins, undefined, {
      seen: obs,
      ...(recorded ? { since: recorded.createdAt } : {}),
      rehearsalKept: Boolean(rehearsing?.kept),
    });
    const v2 = await measuring;
    const trials = await trying;
    const trialMs = o.now() - tried;
    const trialLine = trialSummary(trials, trialMs);
    const raw = await checkAll(o, hops, { obs, bins, v2, fromHop: at, trials });
    const rows = raw.map((r) => planFix(o, r, raw.flat()));
    const settle = o.settle === 'auto' ? 'auto' : `${o.settle} ms`;
    const resume = recorded ? ladderResume(o, recorded, hops, at) : undefined;
    const planText = [
      ...ladderSummary(o, obs, hops, { at, rows: rows.flat(), resuming: Boolean(recorded) }),
      ladderText(o, obs, hops, { rows, bins, at, settle, v2 }),
      trialLine,
      // (said before the checks may refuse: a plan refused on its own trials says why no rehearsal judged it)
      ...(rehearsing?.notRun ? [rehearsing.line!] : []),
      ...(resume?.text ?? []),
    ].join('\n');
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
    if (stop.length) {
      // --dry-run shows the plan it was asked for, then refuses as the run would (exit 1)
      if (o.dryRun) o.reporter.note(planText);
      refuseRows(stop, { stopped: false, shown: o.dryRun });
    }
    return { v2, trials, report, planText };
  });
  const rehearsed = await finishRehearsal(o, rehearsing);
  if (rehearsed && !rehearsing?.notRun) report.planText = `${planText}\n${rehearsed.line}`;
  if (o.dryRun) return report;
  o.reporter.note(report.planText);
  if (
    o.confirm &&
    !(await o.confirm({ target: o.to, planText: report.planText, warnings: [], members: o.cluster.members.length, resuming: Boolean(recorded) }))
  ) {
    return { ...report, status: 'declined' };
  }
  const unlock = await lockLadder(file, o);
  const ahead: Ahead = {};
  try {
    return await climb(o, ports, { file, report, recorded, bins, v2, trials, ahead });
  } finally {
    // (a run that ends while the next hop's reads are under way, halted or failed, waits for them: no etcdctl or host shell left behind)
    await Promise.allSettled([ahead.trials, ahead.reads]);
    await unlock().catch(() => undefined);
  }
}

/** What the climb starts from: the ladder file (recorded: resumed), the report so far, what the checks found. */
interface ClimbFrom {
  file: string;
  report: LadderReport;
  recorded: LadderFile | undefined;
  bins: Record<string, Binaries>;
  v2: HopFacts['v2'];
  trials: Map<string, TrialFinding[]>;
  ahead: Ahead;
}

/** Hop after hop, each one's executor run, the cluster version confirmed, the ladder file kept current. */
async function climb(o: Pick<LadderOptions, Climbing>, ports: HopPorts, at: ClimbFrom): Promise<LadderReport> {
  const { file, report, recorded, bins, v2, trials, ahead } = at;
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
  const save = () => writeRecord(file, lf, o.now(), true, o.debug);
  /** Halts the ladder before `hop` changes anything, journalled, when a check of `rows` blocks it. */
  const haltOn = async (hop: (typeof lf.hops)[number], rows: CheckRow[]): Promise<void> => {
    const stop = blocking(rows, o.strict);
    if (!stop.length) return;
    hop.status = 'pending';
    lf.status = 'halted';
    lf.halt = { hop: hopName(hop), reason: stop.map(reasonOf).join('; ') };
    await save();
    refuseRows(stop, { stopped: true });
  };
  const start = lf.current;
  if (lf.hops[start]) lf.hops[start].status = 'running';
  await save();
  const journal = journalPath(o.dataDir, o.cluster.key);
  /** The look that confirmed the previous hop's cluster version (taken a moment ago): the next hop's rules read it. */
  let confirmed: ClusterObservation | undefined;
  for (let i = start; i < lf.hops.length; i++) {
    const hop = lf.hops[i]!;
    const following = lf.hops[i + 1];
    // (the part of the run the crash-point lines that follow belong to, as the hop's executor says it: kv/drivers/traced.ts)
    o.debug?.(`[kv] point-context: ${hop.from}→${hop.to}${hop.patch ? '-restart' : ''}`);
    let proven = trials;
    if (i > start) {
      // Before this hop's first stop: its rules on the cluster as it is now (the first hop of this
      // run was checked on the plan a moment ago; the look after the previous hop is as fresh).
      const obs = confirmed ?? (await look(o));
      // Each member's settings read again (begun while the hop before waited for its cluster version): a
      // trial runs again only where they changed since the plan.
      const again = await (ahead.trials ?? trialsOf(o, [hop], bins, trials, { seen: obs }));
      // (its data read during that wait too; a read that failed there is made now)
      const reads = await ahead.reads?.catch(() => undefined);
      delete ahead.trials;
      delete ahead.reads;
      proven = new Map([...trials, ...again]);
      const patchLater = lf.hops.some((h, k) => k > i && h.patch);
      const facts = await hopFacts(o, hop, { obs, bins, v2, current: true, patchPlanned: patchLater, trials: again, reads });
      const rows = planFix(o, await check(o, facts));
      report.checks = [...report.checks.filter((r) => r.hop !== hopRows(hop)), ...rows];
      await haltOn(hop, rows);
    }
    if (fixesBefore(hop)) {
      // --fix-v2store (or the fix a killed run left unfinished) before the hop's first stop, then its checks again
      const name = hopRows(hop);
      let again: CheckRow[] | undefined;
      try {
        again = await ports.fix(
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
      const checks = report.checks.filter((c) => c.hop === hopRows(hop));
      r = await ports.run({
        to: hop.to,
        allowSameVersion: hop.patch,
        targetBin: hop.binDir,
        confirm: undefined,
        checks,
        proofs: proofsOf(proven, lf.hops.slice(i), bins),
        v2Measured: lf.v2 ?? (v2 && 'bytes' in v2 ? v2 : undefined),
        atClusterVersionWait: () => void (following && Object.assign(ahead, readAhead(o, following, bins, trials))),
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
