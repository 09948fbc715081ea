/**
 * The rehearsal's place in a run: after every check has passed and before the question and the first
 * stop, the whole plan runs on a clone of the cluster (kv/rehearsal, by opsctl itself). It passes, or the
 * run is refused with the clone's words and nothing changed. A dry run says it will run; --rehearse runs it alone.
 */
import { UpgradeRefused } from '../upgrade/options.js';
import type { Binaries } from './facts.js';
import { byRehearsal, everyMemberSkipped } from './checks.js';
import { hopName, type Hop } from './plan.js';
import type { LadderOptions } from './record.js';
import type { RehearsalVerdict } from '../rehearsal/clone.js';

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The plan's line of the rehearsal (and its verdict where it ran); throws UpgradeRefused where it did not pass. */
export async function rehearseFirst(
  o: Pick<LadderOptions, 'driver' | 'dryRun' | 'reporter' | 'cluster' | 'dataDir' | 'now'> &
    Partial<Pick<LadderOptions, 'rehearse' | 'rehearseOnly' | 'inClone' | 'skipTrial' | 'rehearsalValidMs'>>,
  hops: Hop[],
  bins: Record<string, Binaries>,
  look: { resuming?: boolean } = {},
): Promise<{ line: string; verdict?: RehearsalVerdict } | undefined> {
  if (o.inClone) return undefined;
  const names = hops.map(hopName).join(', ');
  if (byRehearsal(o, look) !== 'rehearsal') {
    const c = o.driver?.clonable?.();
    const why = look.resuming
      ? 'a resume: the run it resumes stopped members already'
      : everyMemberSkipped(o)
        ? `--skip-trial names every member (${o.skipTrial!.reason})`
        : c && 'why' in c
          ? c.why
          : `the ${o.driver?.type ?? ''} driver cannot clone its members here (their start settings per version are not known to opsctl)`;
    if (o.rehearseOnly)
      throw new UpgradeRefused([`--rehearse: not rehearsed: ${why}`], "nothing was changed: each member's own trials are its proof (they ran above)");
    return { line: `rehearsal: not run (${why}); each member's own trials are the proof` };
  }
  const bindirs = Object.fromEntries(hops.map((h) => [h.to, bins[h.to]?.dir]));
  // a verdict of this same plan (members, hops, each start's settings, the binaries) kept by an earlier --rehearse
  const { keepVerdict, planFingerprint, reusableVerdict, verdictPath } = await import('../rehearsal/verdict.js');
  const kept = verdictPath(o.dataDir, o.cluster.key);
  const validMs = o.rehearsalValidMs ?? 12 * 3600_000;
  const fingerprint = o.driver ? await planFingerprint(o.driver, o.cluster.members, hops, bindirs) : undefined;
  const prior = fingerprint && !o.rehearseOnly ? reusableVerdict(kept, fingerprint, o.now(), validMs) : undefined;
  if (prior) {
    const ago = Math.max(1, Math.round((o.now() - Date.parse(prior.at)) / 60_000));
    return {
      line: `rehearsal: passed ${ago} min ago (${prior.at}, ${prior.hops}, ${s(prior.ms)}), reused: the members, their start settings and the hop binaries are unchanged (valid ${Math.round(validMs / 60_000)} min; --rehearsal-valid 0 rehearses again)`,
    };
  }
  if (o.dryRun && !o.rehearseOnly)
    return { line: `rehearsal: before the first stop, the whole plan (${names}) runs on a clone of the cluster (alone, before the window: --rehearse)` };
  const p = o.reporter.begin(`rehearsing ${names} on a clone of the cluster (every member's data copied; a writer and a /health probe on it)`);
  const v = await o.rehearse!(bindirs);
  const load = v.run?.rehearsal;
  if (!v.ok) {
    p.fail(`the rehearsal did not pass (${s(v.ms)})`);
    throw new UpgradeRefused(
      [
        `rehearsal of ${names} on a clone of the cluster: ${v.reason ?? 'did not pass'}${v.tail ? `\n  the clone's last words:\n    ${v.tail.split('\n').join('\n    ')}` : ''}`,
      ],
      `nothing was stopped or changed on the cluster; ${v.run?.error?.hint ?? 'fix what the clone names (the same step would fail on the cluster), then run the same command'}`,
    );
  }
  const line = `rehearsal: passed on a clone of the cluster in ${s(v.ms)} (copy ${s(v.copyMs)}): ${names}${load ? `, ${load.writes.acked} writes acknowledged, ${load.writes.lost} lost, ${load.probes} /health probes` : ''}`;
  p.done(line);
  if (fingerprint) {
    try {
      keepVerdict(kept, { at: new Date(o.now()).toISOString(), hops: names, fingerprint, ms: v.ms });
    } catch (err) {
      // (the rehearsal passed; only its reuse is lost)
      o.reporter.note(`rehearsal: its verdict was not kept (${kept}: ${(err as Error).message}); a later run rehearses again`);
    }
  }
  return { line, verdict: v };
}
