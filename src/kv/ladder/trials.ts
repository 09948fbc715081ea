/** The trial starts of each hop (src/kv/trial) as the ladder runs them: all at once before the first stop, begun ahead of a later hop, counted and said on the plan. */
import { stoppedByJournal } from './checks.js';
import { hopName, type Hop } from './plan.js';
import type { ClusterObservation } from '../cluster/types.js';
import { dataKey, hopDataTrials, hopTrials, type TrialHop } from '../trial/hops.js';
import { byRehearsal, byTheRehearsal, cloneFindings } from './rehearsal.js';
import type { DataStart, TrialFinding, TrialJob } from '../trial/run.js';
import { placeOf, type SettingsReads } from '../drivers/driver.js';
import { type Binaries, hopReads, look, type HopReads } from './facts.js';
import { type LadderOptions, type LadderReport, type Trying } from './record.js';
import type { Snapshotting } from '../upgrade/options.js';
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
  const here = o.driver && (placeOf(o.driver).startsHere || o.cluster.members.every((m) => o.driver!.runsHere?.(m)));
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
