/**
 * A ladder's resume: planned from its journal, and said (ladderResume).
 *
 * The journal is the truth on resume. A recorded hop in flight says which member opsctl stopped, which
 * members it finished and where the cluster stood; the hops are planned from it (that hop, then on to
 * --to), not from appearances: a member down is fine when it is the one the journal stopped, and a
 * cluster whose every answering member already runs the hop's target may still be on the hop's source.
 * Any other state is refused, naming what differs from the journal.
 */
import { isResumable, journalPath, memberMayBeDown, type Journal } from '../journal/journal.js';
import { compareMinor, minor, nextMinor } from '../cluster/parse.js';
import type { ClusterObservation } from '../cluster/types.js';
import { hopName, type Hop, type LadderPlan } from './plan.js';
import { describeResume, resumeState, type ResumeState } from '../journal/resume-state.js';
import { readJournal } from '../journal/read.js';
import { ladderPath, type LadderFile, type LadderOptions, type LadderResume } from './record.js';

/** The hop a journal records (a same-version run is a patch hop), by its minors. */
export function journalHop(j: Journal): Hop {
  return { from: minor(j.source) ?? j.source, to: minor(j.target) ?? j.target, patch: j.allowSameVersion };
}

/** Whether a journal is an upgrade hop a re-run of `kv upgrade --to TO` resumes (not a downgrade, not another target past TO). */
export function resumesUpgrade(j: Journal | undefined, to: string): j is Journal {
  return isResumable(j) && !j.downgrade && compareMinor(minor(j.target) ?? j.target, to) <= 0;
}

/** The ladder from a recorded hop in flight to `to`, or every way the cluster differs from that record. */
export function planFromJournal(obs: ClusterObservation, j: Journal, to: string, file: string): LadderPlan {
  const hop = journalHop(j);
  const down = memberMayBeDown(j);
  const finished = (name: string) => j.steps.filter((s) => s.member === name).every((s) => s.status === 'done' || s.status === 'skipped');
  const touched = (name: string) => j.steps.some((s) => s.member === name && s.kind === 'stop' && s.status !== 'pending');
  const started = (name: string) => j.steps.some((s) => s.member === name && s.kind === 'start' && s.status !== 'pending');
  const planned = new Map(j.members.map((m) => [m.name, m]));
  const reasons: string[] = [];
  const at = (v: string | undefined) => minor(v) ?? '?';
  for (const m of obs.members) {
    const p = planned.get(m.name);
    if (!p) {
      reasons.push(`member ${m.name} is not in the journal's plan (${[...planned.keys()].join(', ')}): was it added since?`);
      continue;
    }
    if (!m.reachable || !m.serverVersion) {
      if (m.name === down) continue;
      reasons.push(
        `member ${m.name} (${m.endpoint}) does not answer (${m.error ?? 'no answer'}), but the journal stopped ${down ? `${down}, not ${m.name}` : 'no member that is not started again'}`,
      );
      continue;
    }
    const v = at(m.serverVersion);
    if (hop.patch) {
      if (v !== hop.to)
        reasons.push(`member ${m.name} runs ${m.serverVersion}, but the journal's rolling restart on ${hop.to} leaves every member on ${hop.to}`);
      continue;
    }
    const done = p.action === 'skip' || finished(m.name);
    if (done && v !== hop.to)
      reasons.push(
        `member ${m.name} runs ${m.serverVersion}, but the journal recorded it ${p.action === 'skip' ? 'already' : 'upgraded'} on ${hop.to}: was it put back by hand?`,
      );
    else if (!touched(m.name) && v !== hop.from)
      reasons.push(`member ${m.name} runs ${m.serverVersion}, but the journal has not touched it yet: it should run ${hop.from}`);
    else if (v !== hop.from && v !== hop.to)
      reasons.push(`member ${m.name} runs ${m.serverVersion}: the journal's hop ${hop.from} → ${hop.to} leaves its members on ${hop.from} or ${hop.to}`);
    else if (touched(m.name) && !started(m.name) && v !== hop.from)
      reasons.push(`member ${m.name} runs ${m.serverVersion}, but the journal stopped it and has not started it on ${hop.to}`);
  }
  const answering = obs.members.filter((m) => m.reachable && m.serverVersion);
  const clusterVersions = [
    ...new Set(
      answering
        .map((m) => m.clusterVersion)
        .filter((c) => c && c !== 'not_decided')
        .map((c) => at(c)),
    ),
  ];
  // While a member is on the source (or down, stopped on it), the cluster version is the source; once
  // every member runs the target it may still be the source until the leader moves it, and while the
  // leader's move is applied some members say the target and others still the source (a kill there).
  const silent = obs.members.some((m) => m.name === down && (!m.reachable || !m.serverVersion));
  const mixed = silent || answering.some((m) => at(m.serverVersion) === hop.from);
  const moving = !mixed && !hop.patch && clusterVersions.length === 2 && clusterVersions.includes(hop.from) && clusterVersions.includes(hop.to);
  if (clusterVersions.length > 1 && !moving) reasons.push(`members disagree on the cluster version (${clusterVersions.join(', ')})`);
  const cluster = moving ? hop.from : clusterVersions[0];
  if (cluster && !hop.patch && cluster !== hop.from && (mixed || cluster !== hop.to))
    reasons.push(
      `the cluster version is ${cluster}, but the journal's hop ${hop.from} → ${hop.to} leaves it at ${hop.from}${mixed ? ' while a member is on ' + hop.from : ` or ${hop.to}`}`,
    );
  if (reasons.length)
    return {
      ok: false,
      reasons: [
        ...reasons.map((r) => `${r} (journal ${file})`),
        `the journal records the hop ${hop.from} → ${hop.to} in flight${down ? `, with ${down} stopped by it` : ''}: nothing else may have changed the members meanwhile`,
      ],
    };
  const hops: Hop[] = [hop];
  for (let v = hop.to; compareMinor(v, to) < 0; v = nextMinor(v)) hops.push({ from: v, to: nextMinor(v), patch: false });
  return { ok: true, from: hop.from, hops };
}

/** What a ladder's resume finds: the hops done and left, and inside the hop in flight its members (from its journal). */
export function ladderResume(o: Pick<LadderOptions, 'dataDir' | 'cluster'>, lf: LadderFile, hops: Hop[], at: number): { state: LadderResume; text: string[] } {
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
