/**
 * The trials of a ladder's hops: every member on every hop's binary, all at once before the first
 * stop (a hop's settings do not change between hops: the members start every version from the same
 * config file, flags and environment). Before a later hop's first stop each member's settings are
 * read again, and a trial runs again only for a member whose settings changed since.
 */
import type { MemberSpec } from '../cluster/cluster-file.js';
import type { MemberDriver } from '../drivers/driver.js';
import type { HopFacts } from '../rules/types.js';
import { runTrials, type TrialFinding, type TrialJob } from './run.js';

/** One hop as its trials see it: its name, its target minor, its binaries (dir and release) when known. */
export interface TrialHop {
  name: string;
  to: string;
  binDir?: string;
  release?: string;
}

export interface HopTrialOptions {
  driver?: MemberDriver;
  members: MemberSpec[];
  timeoutS: number;
  debug?: (line: string) => void;
}

/** The trials of `hops`, by hop name (as HopFacts carry them); `prior` findings stand where the settings did not change. */
export async function hopTrials(o: HopTrialOptions, hops: TrialHop[], prior?: Map<string, TrialFinding[]>): Promise<Map<string, TrialFinding[]>> {
  const jobs: TrialJob[] = hops.flatMap((h) =>
    o.members.map((m) => ({ hop: h.name, member: m, target: { version: h.to, binDir: h.binDir }, ...(h.release ? { release: h.release } : {}) })),
  );
  const before = new Map<string, TrialFinding>();
  for (const list of prior?.values() ?? []) for (const t of list) before.set(`${t.hop}\0${t.member}`, t);
  // All at once: a trial mostly waits (the start, an election); a host gets at most one per hop and member.
  const found = await runTrials(jobs, { driver: o.driver, timeoutS: o.timeoutS, debug: o.debug, parallel: Math.min(jobs.length, 16), prior: before });
  const out = new Map<string, TrialFinding[]>();
  for (const t of found) out.set(t.hop, [...(out.get(t.hop) ?? []), t]);
  return out;
}

/** A hop's trials as its facts carry them. */
export function trialFacts(trials: Map<string, TrialFinding[]> | undefined, hop: string): HopFacts['trials'] {
  const list = trials?.get(hop);
  return list ?? { why: 'no trial ran for this hop' };
}
