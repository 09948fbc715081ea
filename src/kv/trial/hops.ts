/**
 * The trials of a ladder's hops: every member on every hop's binary, all at once before the first
 * stop (a hop's settings do not change between hops: the members start every version from the same
 * config file, flags and environment). Before a later hop's first stop each member's settings are
 * read again, and a trial runs again only for a member whose settings changed since.
 */
import type { MemberSpec } from '../cluster/cluster-file.js';
import type { MemberDriver, SettingsReads } from '../drivers/driver.js';
import type { CheckRow, HopFacts } from '../rules/types.js';
import { runTrials, type TrialFinding, type TrialJob, type TrialOptions } from './run.js';
import { runDataTrials } from './data.js';

/** One hop as its trials see it: its name, its target minor, its binaries (dir and release) when known. */
export interface TrialHop {
  name: string;
  to: string;
  binDir?: string;
  release?: string;
  /** Each member's own running binary (a rolling restart with no binary given). */
  running?: boolean;
}

export interface HopTrialOptions {
  driver?: MemberDriver;
  members: MemberSpec[];
  timeoutS: number;
  debug?: (line: string) => void;
  /** One round of settings reads shared by the settings and the data trials (drivers/driver.ts). */
  reads?: SettingsReads;
  /** The data trials of the same round, by hop and member: a settings trial their start proves is not run again (trial/run.ts). */
  dataStart?: TrialOptions['dataStart'];
  /**
   * A member a resumed run finds down because the run it resumes stopped it (its journal says so): no
   * process to read its settings from, so its proof is the trial that journal recorded before that stop.
   */
  stopped?: { member: string; hop: string; recorded: readonly CheckRow[] };
  /** What a member runs when that is the hop's target already ("etcd 3.6.16"): the hop does not stop it, so no trial of it starts (trial/run.ts). */
  onTarget?: (member: string, hop: TrialHop) => string | undefined;
}

/** The trials of `hops`, by hop name (as HopFacts carry them); `prior` findings stand where the settings did not change. */
export async function hopTrials(o: HopTrialOptions, hops: TrialHop[], prior?: Map<string, TrialFinding[]>): Promise<Map<string, TrialFinding[]>> {
  const down = o.stopped?.member;
  const jobs: TrialJob[] = hops.flatMap((h) =>
    o.members
      .filter((m) => m.name !== down)
      .map((m) => ({
        hop: h.name,
        member: m,
        target: { version: h.to, binDir: h.binDir, ...(h.running ? { running: true } : {}) },
        ...(h.release ? { release: h.release } : {}),
        ...(o.onTarget?.(m.name, h) ? { onTarget: o.onTarget(m.name, h) } : {}),
      })),
  );
  const before = new Map<string, TrialFinding>();
  for (const [key, list] of prior ?? []) if (key !== dataKey(list[0]?.hop ?? '')) for (const t of list) before.set(`${t.hop}\0${t.member}`, t);
  // All at once: a trial mostly waits (the start, an election); a host gets at most one per hop and member.
  const found = await runTrials(jobs, {
    driver: o.driver,
    timeoutS: o.timeoutS,
    debug: o.debug,
    parallel: Math.min(jobs.length, 16),
    prior: before,
    ...(o.reads ? { reads: o.reads } : {}),
    ...(o.dataStart ? { dataStart: o.dataStart } : {}),
  });
  const s = o.stopped;
  if (s) for (const h of hops) found.push(h.name === s.hop ? recordedTrial(s.member, h.name, s.recorded) : laterTrial(s.member, h.name));
  const out = new Map<string, TrialFinding[]>();
  for (const t of found) out.set(t.hop, [...(out.get(t.hop) ?? []), t]);
  for (const [hop, list] of out) out.set(hop, o.members.map((m) => list.find((t) => t.member === m.name)!).filter(Boolean));
  return out;
}

/** A later hop's trial of a member that is down now: it runs before that hop's first stop, once the member is back. */
function laterTrial(member: string, hop: string): TrialFinding {
  return {
    member,
    hop,
    result: 'later',
    detail: "down now (stopped by the run this one resumes): its trial runs before this hop's first stop, once it is back",
  };
}

/** The proof of a member the resumed run stopped: its trial as the journal recorded it before that stop, or why there is none. */
function recordedTrial(member: string, hop: string, recorded: readonly CheckRow[]): TrialFinding {
  const plain = (h: string) => h.replace(/ \(patch\)$/, '');
  const row = recorded.find((r) => r.rule === 'trial-start' && r.member === member && plain(r.hop) === plain(hop));
  if (row?.status === 'ok')
    return { member, hop, result: 'ok', detail: `down (stopped by the run this one resumes): its trial before that stop: ${row.detail}` };
  return {
    member,
    hop,
    result: 'not-checked',
    detail: `down (stopped by the run this one resumes), and the journal holds no passed trial of it for ${hop}${row ? ` (it recorded: ${row.status}: ${row.detail})` : ''}: start it again as it was (opsctl kv rollback), or name it: --skip-trial ${member}`,
  };
}

/** A hop's trials as its facts carry them. */
export function trialFacts(trials: Map<string, TrialFinding[]> | undefined, hop: string): HopFacts['trials'] {
  const list = trials?.get(hop);
  return list ?? { why: 'no trial ran for this hop' };
}

/** Where a hop's data trials are kept beside its settings trials (one map: the plan counts both). */
export const dataKey = (hop: string): string => `${hop} (data)`;

/** A hop's data trials as its facts carry them. */
export function dataTrialFacts(trials: Map<string, TrialFinding[]> | undefined, hop: string): HopFacts['dataTrials'] {
  return trials?.get(dataKey(hop)) ?? { why: 'no data trial ran for this hop' };
}

/**
 * The data trials of `hops` (trial/data.ts): per member, one copy of its data through every hop's
 * binary in turn (as the ladder will take it), members at once; kept under dataKey(hop). A member the
 * resumed run stopped is judged by its journal, as for the settings trials. Simulated members keep no
 * etcd data: their rows say the trial does not apply.
 */
export async function hopDataTrials(
  o: HopTrialOptions & { credentials?: { user: string; password: string }; tls?: { cacert?: string; cert?: string; key?: string } },
  hops: TrialHop[],
): Promise<Map<string, TrialFinding[]>> {
  const down = o.stopped?.member;
  const members = o.members.filter((m) => m.name !== down);
  // A member on a hop's target already serves its data with that binary: its chain begins with the first hop it is not on.
  const already: TrialFinding[] = [];
  const left = (m: MemberSpec) => {
    const on = hops.filter((h) => o.onTarget?.(m.name, h));
    for (const h of on)
      already.push({
        member: m.name,
        hop: h.name,
        result: 'ok',
        kept: 'on-target',
        detail: `runs ${o.onTarget!(m.name, h)!} already, the hop's target, on its data: the hop does not stop it, no data trial`,
      });
    return hops.filter((h) => !on.includes(h));
  };
  const chains = await Promise.all(
    members
      .map((m) => ({ m, todo: left(m) }))
      .filter((x) => x.todo.length)
      .map(({ m, todo }) =>
        runDataTrials(
          todo.map((h) => ({
            hop: h.name,
            member: m,
            target: { version: h.to, binDir: h.binDir, ...(h.running ? { running: true } : {}) },
            ...(h.release ? { release: h.release } : {}),
          })),
          {
            driver: o.driver,
            timeoutS: o.timeoutS,
            debug: o.debug,
            ...(o.reads ? { reads: o.reads } : {}),
            ...(o.credentials ? { credentials: o.credentials } : {}),
            ...(o.tls ? { tls: o.tls } : {}),
          },
        ).then((list) =>
          list.map((f): TrialFinding => (f.moot ? { ...f, result: 'ok', detail: `does not apply: ${f.detail.replace(/^data trial not run: /, '')}` } : f)),
        ),
      ),
  );
  const found = [...chains.flat(), ...already];
  const s = o.stopped;
  if (s)
    for (const h of hops) {
      const row =
        h.name.replace(/ \(patch\)$/, '') === s.hop.replace(/ \(patch\)$/, '')
          ? s.recorded.find((r) => r.rule === 'data-trial' && r.member === s.member)
          : undefined;
      found.push(
        row?.status === 'ok'
          ? {
              member: s.member,
              hop: h.name,
              result: 'ok',
              detail: `down (stopped by the run this one resumes): its data trial before that stop: ${row.detail}`,
            }
          : h.name === s.hop
            ? {
                ...recordedTrial(s.member, h.name, []),
                detail: `down (stopped by the run this one resumes), and the journal holds no passed data trial of it for ${h.name}: start it again as it was (opsctl kv rollback), or name it: --skip-trial ${s.member}`,
              }
            : laterTrial(s.member, h.name),
      );
    }
  const out = new Map<string, TrialFinding[]>();
  for (const h of hops) out.set(dataKey(h.name), o.members.map((m) => found.find((f) => f.member === m.name && f.hop === h.name)!).filter(Boolean));
  return out;
}
