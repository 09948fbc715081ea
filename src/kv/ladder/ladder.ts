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
import { existsSync } from 'node:fs';
import { OpsError } from '../../core/errors.js';
import { requireDriver, runUpgrade } from '../upgrade/executor.js';
import { UpgradeRefused, type UpgradeReport } from '../upgrade/options.js';
import { journalPath } from '../journal/journal.js';
import { readJournal } from '../journal/read.js';
import { checkJournalPlan } from '../journal/plan.js';
import { hopName, planLadder, type Hop } from './plan.js';
import { planFromJournal, resumesUpgrade } from './resume.js';
import { minor } from '../cluster/parse.js';
import { ladderSummary, ladderText } from './plan-text.js';
import type { CheckRow } from '../rules/types.js';
import type { ClusterObservation } from '../cluster/types.js';
import type { EarlyVersions } from './facts.js';
import { askVersionsEarly, clusterVersionCaughtUp, hopBinaries, look, measureV2, readsBeforeTrials, wholeClusterFirst, type DataReads } from './facts.js';
import { ladderResume } from './resume.js';
import { giveBackFirst } from './give-back.js';
import { begun, besideRehearsal, finishRehearsal, readsAfter, rehearsalAccount, startRehearsal } from './rehearsal.js';
import { climb } from './climb.js';
import { single, type HopPorts, type Planning } from './single-hop.js';
import { type LadderFile, type LadderOptions, type LadderReport, ladderPath, lockLadder, readLadder } from './record.js';
import { blocking, checkAll, refuseRows, strOf } from './checks.js';
import { type Ahead, trialCounts, trialSummary, trialsOf } from './trials.js';
import { finishRecordedFixes, planFix, runFix } from './fixes.js';

/**
 * The single-hop run with its rulebook checked first (`kv upgrade --to 3.4` on a 3.3 cluster; a rolling
 * restart with --allow-same-version is a hop onto the same minor), or the ladder when the target is
 * more than one hop away (or a ladder is recorded for this cluster).
 */
export async function runUpgradeOrLadder(o: LadderOptions): Promise<{ single: UpgradeReport; checks: CheckRow[] } | LadderReport> {
  requireDriver(o);
  const ports: HopPorts = {
    // (the hook of the run's own options and the hop's both: a clone's hand-off, the ladder's read ahead)
    run: (hop) =>
      runUpgrade({
        ...o,
        ...hop,
        atClusterVersionWait: (to) => Promise.all([o.atClusterVersionWait?.(to), hop.atClusterVersionWait?.(to)]).then(() => undefined),
      }),
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
  const starting = startRehearsal(o, hops.slice(at), bins, { resuming: Boolean(recorded) });
  // (the plan's reads of the members' data that need no trial begin with them, and are told to the rehearsal's clone once made)
  const told = new Map<string, DataReads>();
  const onData = (h: Hop) => (d: DataReads) =>
    void (
      told.set(hopName(h), d).size === hops.length - at &&
      starting.then(
        (r) => r?.tell?.([...told]),
        () => undefined,
      )
    );
  const after = readsAfter(o, starting, { resuming: Boolean(recorded) });
  const reading = o.judged
    ? []
    : hops.map((h, i) =>
        i < at
          ? undefined
          : readsBeforeTrials(o, h, {
              obs,
              bins,
              current: i === at,
              judgedBeforeCopy: Boolean(o.inClone) && i === at,
              onData: onData(h),
              after,
            }),
      );
  const rehearsing = await begun(starting, reading);
  const { v2, trials, report, planText } = await besideRehearsal(
    rehearsing,
    async () => {
      const trying = trialsOf(o, hops.slice(at), bins, undefined, {
        seen: obs,
        ...(recorded ? { since: recorded.createdAt } : {}),
        rehearsalKept: Boolean(rehearsing?.kept),
      });
      const v2 = await measuring;
      const trials = await trying;
      const trialMs = o.now() - tried;
      const trialLine = trialSummary(trials, trialMs);
      const raw = await checkAll(o, hops, {
        obs,
        bins,
        v2,
        fromHop: at,
        trials,
        early: reading,
        ...(rehearsing?.tell ? { tell: (r) => rehearsing.tell?.(r) } : {}),
      });
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
      const stop = blocking(rows.flat(), { strict: o.strict });
      if (stop.length) {
        // --dry-run shows the plan it was asked for, then refuses as the run would (exit 1)
        if (o.dryRun) o.reporter.note(planText);
        refuseRows(stop, { stopped: false, shown: o.dryRun });
      }
      return { v2, trials, report, planText };
    },
    reading,
  );
  const rehearsed = await finishRehearsal(o, rehearsing);
  if (rehearsed && !rehearsing?.notRun) report.planText = `${planText}\n${rehearsed.line}`;
  if (rehearsed?.verdict) report.rehearsed = rehearsalAccount(rehearsed.verdict);
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
