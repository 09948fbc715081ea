/**
 * One hop with its rulebook checked first (`kv upgrade --to 3.4` on a 3.3 cluster; a rolling restart with
 * --allow-same-version is a hop onto the same minor): its binary, its rules, every member's trial or the
 * rehearsal beside them (the proof), the v2 fix it plans, then the executor. The ladder (ladder.ts) runs
 * the same executor hop after hop; the shapes both are given are here.
 */
import { UpgradeRefused, type Look, type RehearsalAccount, type Snapshotting, type UpgradeOptions, type UpgradeReport } from '../upgrade/options.js';
import { unfinishedV2Fix } from '../v2fix/v2store-fix-file.js';
import type { CheckRow, HopFacts } from '../rules/types.js';
import type { ClusterObservation } from '../cluster/types.js';
import type { TrialFinding } from '../trial/run.js';
import type { TrialProof } from '../journal/runs.js';
import { hopName, type Hop } from './plan.js';
import { blockedHopText } from './plan-text.js';
import { hopBinaries, hopFacts, measureV2, readsBeforeTrials, readsOf, settlePlan, type Binaries, type EarlyVersions } from './facts.js';
import { proofsOf } from './proofs.js';
import { begun, besideRehearsal, finishRehearsal, readsAfter, rehearsalAccount, startRehearsal } from './rehearsal.js';
import type { BinarySources, Judging, LadderOptions, Trying } from './record.js';
import { blocking, check, refuseRows } from './checks.js';
import { trialSummary, trialsOf } from './trials.js';
import { fixesBefore, fixRows, planFix, writesPast } from './fixes.js';

/** What one hop's executor run is given besides the options the verb built: where it goes, its binary, its checks, the question. */
export type HopRun = Pick<
  UpgradeOptions,
  'to' | 'allowSameVersion' | 'targetBin' | 'confirm' | 'checks' | 'proofs' | 'shownChecks' | 'v2Measured' | 'atClusterVersionWait'
>;

/** How the ladder changes the cluster, built by its entry from the options: a hop's executor run, the v2 fix before a hop (checks.ts runFix). */
export interface HopPorts {
  run(hop: HopRun): Promise<UpgradeReport>;
  fix(hop: Hop, rows: CheckRow[], bins: Record<string, Binaries>, v2: HopFacts['v2'], trials?: Map<string, TrialFinding[]>): Promise<CheckRow[] | undefined>;
}

/** What a hop after the first reads before its stops: the look, its trials and facts, how its rows are judged, the clock and the records. */
export type Climbing = Look | Trying | Judging | Snapshotting | 'now' | 'to';
/** What the plan before the first stop reads besides: the binaries, the v2 store, the plan's lines, the operator's say, the lock. */
export type Planning =
  | Climbing
  | BinarySources
  | 'rollbackCommand'
  | 'settle'
  | 'noBackup'
  | 'dryRun'
  | 'confirm'
  | 'reporter'
  | 'lockStaleMs'
  | 'rehearse'
  | 'rehearseOnly'
  | 'inClone'
  | 'judged';

/** One hop: its binary, its rules and every member's trial (the proof), then the executor as before. */
export async function single(
  o: Pick<LadderOptions, Exclude<Planning, 'rollbackCommand' | 'lockStaleMs'>>,
  ports: HopPorts,
  obs: ClusterObservation,
  hop: Hop | undefined,
  more: { early?: EarlyVersions; resuming?: boolean } = {},
): Promise<{ single: UpgradeReport; checks: CheckRow[] }> {
  let checks: CheckRow[] = [];
  let notes: string[] = [];
  let v2: HopFacts['v2'];
  let trials: Map<string, TrialFinding[]> | undefined;
  let proofs: TrialProof[] | undefined;
  let account: RehearsalAccount | undefined;
  let targetBin = o.targetBins['*'] ?? o.targetBins[o.to];
  if (hop) {
    const { bins, reasons } = await hopBinaries(o, [hop], more.early);
    if (reasons.length) {
      throw new UpgradeRefused(
        reasons,
        'nothing was changed: give the binary of the right version (--target-bin VERSION=DIR, or opsctl kv release get VERSION.N)',
      );
    }
    targetBin = bins[hop.to]?.dir ?? targetBin;
    const tried = o.now();
    const starting = startRehearsal(o, [hop], bins, { resuming: more.resuming });
    // (the reads of the members' data that need no trial begin with them, and are told to the rehearsal's clone once read)
    const judgedBeforeCopy = Boolean(o.inClone);
    const reading = o.judged
      ? undefined
      : readsBeforeTrials(o, hop, {
          obs,
          bins,
          current: true,
          judgedBeforeCopy,
          onData: (d) =>
            void starting.then(
              (r) => r?.tell?.([[hopName(hop), d]]),
              () => undefined,
            ),
          after: readsAfter(o, starting, { resuming: more.resuming }),
        });
    const rehearsing = await begun(starting, [reading]);
    await besideRehearsal(rehearsing, async () => {
      const trying = trialsOf(o, [hop], bins, undefined, { seen: obs, resuming: more.resuming, rehearsalKept: Boolean(rehearsing?.kept) });
      v2 = await measureV2(o, obs);
      trials = await trying;
      proofs = proofsOf(trials, [hop], bins);
      const trialMs = o.now() - tried;
      const facts = await hopFacts(o, hop, {
        obs,
        bins,
        v2,
        current: true,
        trials,
        judgedBeforeCopy,
        ...(o.judged ? { judged: o.judged } : {}),
        ...(reading ? { reads: await reading } : {}),
      });
      // (what this run read of the members' data for its plan, told to the rehearsal's clone: it reads its copy no more)
      rehearsing?.tell?.([[hopName(hop), readsOf(facts)]]);
      checks = planFix(o, await check(o, facts));
      const stop = blocking(checks, { strict: o.strict });
      notes = [settlePlan(o, hop, v2), trialSummary(trials, trialMs)];
      if (stop.length) {
        // --dry-run shows what it was asked for (the summary and each finding), then refuses as the run would (exit 1)
        if (o.dryRun) o.reporter.note(blockedHopText(o, obs, hop, checks, notes));
        refuseRows(stop, { stopped: false, shown: o.dryRun });
      }
    }, [reading]);
    const rehearsed = await finishRehearsal(o, rehearsing);
    if (rehearsed) notes.push(rehearsed.line);
    if (rehearsed?.verdict) account = rehearsalAccount(rehearsed.verdict);
  }
  let confirm = o.confirm;
  const fixing = hop && fixesBefore(hop) && !o.dryRun && (fixRows(checks).length > 0 || unfinishedV2Fix(o.dataDir, o.cluster.key, hop.from) !== undefined);
  if (hop && fixing) {
    // One question for both: the fix changes the cluster, so it is asked before the fix.
    const names = fixRows(checks).map((r) => r.member!);
    const how = writesPast(o)
      ? `written past on ${hop.from}, no stop (raft entries until each saves a new snapshot)`
      : `restarted once on ${hop.from} with snapshot-count 1`;
    const planText = `Before the hop ${hop.from} → ${hop.to}: ${names.join(', ') || 'the members the recorded fix names'} ${how} (--fix-v2store); then the hop`;
    o.reporter.note(planText);
    if (confirm && !(await confirm({ target: o.to, planText, warnings: [], members: o.cluster.members.length, resuming: false }))) {
      return { single: await ports.run({ to: o.to, allowSameVersion: false, targetBin, confirm: () => Promise.resolve(false), checks }), checks };
    }
    confirm = undefined;
    const bins = (await hopBinaries(o, [hop])).bins;
    const again = await ports.fix(hop, checks, bins, v2, trials);
    if (again) {
      // (the plan below shows them, once)
      checks = again;
      const stop = blocking(checks, { strict: o.strict });
      if (stop.length) refuseRows(stop, { stopped: true });
    }
  }
  const report = await ports.run({
    to: hop?.patch ? hop.to : o.to,
    allowSameVersion: Boolean(hop?.patch),
    targetBin,
    confirm,
    checks,
    ...(proofs ? { proofs } : {}),
    ...(hop ? { shownChecks: { notes, strict: o.strict } } : {}),
    ...(v2 && 'bytes' in v2 ? { v2Measured: v2 } : {}),
  });
  return { single: account ? { ...report, rehearsed: account } : report, checks };
}
