/**
 * The trials a resume need not run again: a member on the hop's target already, and a passed trial the
 * run it resumes recorded in its journal (TrialProof, journal/runs.ts).
 *
 * Why a recorded verdict is as safe as the run it resumes: that run stops its members minutes after their
 * trials, on the verdicts it found before its first stop (its last member after every other member's
 * cycle and settle; a ladder's later hops after the whole of the earlier ones). A resume stands on a
 * verdict only where it is the same proof that run would have gone on with: the same run (the journal
 * it resumes, not done; a ladder's hop journal no older than the ladder), the same hop, the same binary
 * (its dir, and its release as asked now), the member's settings read again now and unchanged (the same
 * fingerprint: program, flags, environment, config file, working dir; the journal keeps its SHA-256 only),
 * and at most PROOF_REUSE_MS old. The age is the trial's own, never renewed by a reuse: a chain of resumes
 * cannot stretch it. Any other member (changed settings, another binary, an older verdict, one that did
 * not pass) is tried as on a first run. A member on the hop's target minor is never stopped by the hop
 * (the planner skips it; a resume finishes only the cycle its journal began, on the binary it runs): its
 * running process is the proof a trial would give.
 */
import type { MemberSpec } from '../cluster/cluster-file.js';
import { minor } from '../cluster/parse.js';
import type { ClusterObservation } from '../cluster/types.js';
import type { MemberDriver, SettingsReads } from '../drivers/driver.js';
import { isResumable, journalPath } from '../journal/journal.js';
import { readJournal } from '../journal/read.js';
import type { JournalWithRuns, TrialProof } from '../journal/runs.js';
import { dataKey, type TrialHop } from '../trial/hops.js';
import { fingerprint, fingerprintDigest, type TrialFinding } from '../trial/run.js';
import type { Binaries } from './facts.js';
import { hopName, type Hop } from './plan.js';

/** How old a recorded verdict may be to stand for a resume (of the order of a run's own span between its trials and its last stop). */
export const PROOF_REUSE_MS = 15 * 60_000;

const REUSED = / \(not run again: passed [^()]* ago in the run this one resumes[^()]*\)$/;

/**
 * What the member runs when that is the hop's target minor already (the planner skips such a member):
 * never for a patch hop or a restart onto the same version, which restart every member.
 */
export function onTargetOf(seen: ClusterObservation | undefined): (member: string, hop: TrialHop) => string | undefined {
  return (member, hop) => {
    if (hop.running || hop.name.endsWith('(patch)')) return undefined;
    const v = seen?.members.find((m) => m.name === member)?.serverVersion;
    return v && minor(v) === hop.to ? `etcd ${v}` : undefined;
  };
}

/** Each hop as its trials see it: its name, target, binary dir and release (or each member's own binary). */
export function trialHops(hops: Hop[], bins: Record<string, Binaries>): TrialHop[] {
  return hops.map((h) => {
    const b = bins[h.to];
    return {
      name: hopName(h),
      to: h.to,
      binDir: b?.dir,
      release: typeof b?.version === 'string' ? b.version : undefined,
      ...(b?.running ? { running: true } : {}),
    };
  });
}

/** The passed trials of `hops` to record in the run's journal: each with its hop's binary, the time it ran, the settings it judged. */
export function proofsOf(trials: Map<string, TrialFinding[]> | undefined, hops: Hop[], bins: Record<string, Binaries>): TrialProof[] {
  const out: TrialProof[] = [];
  for (const h of trialHops(hops, bins))
    for (const [rule, key] of [
      ['trial-start', h.name],
      ['data-trial', dataKey(h.name)],
    ] as const)
      for (const f of trials?.get(key) ?? []) {
        if (f.result !== 'ok' || !f.fingerprint || !f.at || f.kept === 'on-target') continue;
        out.push({
          hop: h.name,
          member: f.member,
          rule,
          at: f.at,
          fingerprint: fingerprintDigest(f.fingerprint),
          ...(h.binDir ? { binDir: h.binDir } : {}),
          ...(h.release ? { release: h.release } : {}),
          detail: f.detail.replace(REUSED, ''),
        });
      }
  return out;
}

/**
 * The verdicts the run this one resumes recorded that may stand now (see above), as findings by hop (the
 * settings trials' under the hop's name, the data trials' under dataKey): the settings trials compare their
 * fingerprint when they read the member again (trial/run.ts); the data trials' are compared here, on a
 * read of the same round (`reads`). `except`: the member that run left down (its journal's checks judge it).
 */
export async function recordedProofs(
  o: { dataDir: string; cluster: { key: string; members: MemberSpec[] }; driver?: MemberDriver; now: () => number },
  hops: TrialHop[],
  reads: SettingsReads,
  only: { since?: string; except?: string } = {},
): Promise<Map<string, TrialFinding[]>> {
  const out = new Map<string, TrialFinding[]>();
  let j: JournalWithRuns | undefined;
  try {
    j = readJournal(journalPath(o.dataDir, o.cluster.key));
  } catch {
    return out; // (the executor names a journal it cannot use)
  }
  const proofs = isResumable(j) && !(only.since && j.createdAt < only.since) ? (j.proofs ?? []) : [];
  if (!proofs.length) return out;
  const now = o.now();
  const usable = (p: TrialProof, h: TrialHop) =>
    p.member !== only.except &&
    p.hop === h.name &&
    p.binDir === h.binDir &&
    p.release === h.release &&
    now >= Date.parse(p.at) &&
    now - Date.parse(p.at) <= PROOF_REUSE_MS;
  const finding = (p: TrialProof): TrialFinding => ({
    member: p.member,
    hop: p.hop,
    result: 'ok',
    fingerprint: p.fingerprint,
    at: p.at,
    kept: 'journal',
    detail: `${p.detail} (not run again: passed ${Math.round((now - Date.parse(p.at)) / 1000)} s ago in the run this one resumes, kept in its journal; the same binary and settings; a verdict stands for at most ${PROOF_REUSE_MS / 60_000} min)`,
  });
  for (const h of hops) {
    const list = proofs.filter((p) => p.rule === 'trial-start' && usable(p, h)).map(finding);
    if (list.length) out.set(h.name, list);
  }
  // A data verdict stands for a member only where every hop of its chain has one, each on the settings read now.
  const d = o.driver;
  const data = await Promise.all(
    o.cluster.members.map(async (m) => {
      const mine = hops.map((h) => proofs.find((p) => p.rule === 'data-trial' && p.member === m.name && usable(p, h)));
      if (!d?.startSettings || mine.some((p) => !p)) return [];
      const read = await Promise.all(
        hops.map(async (h, i) => {
          const target = { version: h.to, binDir: h.binDir, ...(h.running ? { running: true } : {}) };
          const s = await d.startSettings!(m, target, reads).catch(() => undefined);
          const fp = s && !('why' in s) ? fingerprint(s) : undefined;
          return fp && fingerprintDigest(fp) === mine[i]!.fingerprint ? fp : undefined;
        }),
      );
      return read.every(Boolean) ? mine.map((p, i) => ({ ...finding(p!), fingerprint: read[i]! })) : [];
    }),
  );
  for (const f of data.flat()) out.set(dataKey(f.hop), [...(out.get(dataKey(f.hop)) ?? []), f]);
  return out;
}
