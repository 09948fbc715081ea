/**
 * The rehearsal's place in a run: before the question and the first stop, the whole plan runs on a clone of
 * the cluster (kv/rehearsal, by opsctl itself). It begins once the cluster was looked at, beside the plan's
 * checks (it changes nothing but its clone, and its copy and the clone's start take about as long as they
 * do), and is judged once every check has passed: it passes, or the run is refused with the clone's words
 * and nothing changed; a check that refuses ends it. A dry run says it will run; --rehearse runs it alone.
 */
import { UpgradeRefused, type RehearsalAccount } from '../upgrade/options.js';
import type { Binaries, DataReads } from './facts.js';
import { dataKey, type TrialHop } from '../trial/hops.js';
import type { TrialFinding } from '../trial/run.js';
import { hopName, type Hop } from './plan.js';
import type { LadderOptions } from './record.js';
import type { RehearsalVerdict } from '../rehearsal/clone.js';
import { copyTooLarge } from '../rehearsal/copy-size.js';

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** How long a kept verdict is reused by default (--rehearsal-valid). */
const VALID_MS = 12 * 3600_000;

type Rehearsing = Pick<LadderOptions, 'driver' | 'dryRun' | 'reporter' | 'cluster' | 'dataDir' | 'now'> &
  Partial<Pick<LadderOptions, 'rehearse' | 'rehearseOnly' | 'inClone' | 'skipTrial' | 'rehearsalValidMs' | 'rehearsalMaxCopy'>>;

/**
 * The rehearsal begun beside the plan's checks (its copy, its clone's start and the clone's own checks take
 * as long as the cluster's checks; it changes nothing but the clone): `line` where it will not run (not
 * rehearsed, a kept verdict reused, a dry run), else the run under way; `cancel` ends it (the checks refused).
 */
export interface EarlyRehearsal {
  readonly names: string;
  readonly line?: string;
  readonly running?: Promise<RehearsalVerdict>;
  readonly fingerprint?: string;
  /** Why it cannot run (--rehearse then refuses, once the checks and trials have said their part). */
  readonly notRun?: string;
  /** A passed verdict of this same plan kept by an earlier --rehearse (the members' start settings and the binaries unchanged). */
  readonly kept?: boolean;
  /** Tells the clone's run what this run read of the members' data for its plan, by hop (it reads its copy no more); once. */
  tell?(reads: Array<[string, DataReads]> | undefined): void;
  /** Once its copy of the members' files is whole, every member resumed (the plan's own reads of the members' data wait for it, not to lengthen the pause). */
  readonly copied?: Promise<void>;
  cancel(): Promise<void>;
}

/** Begins the rehearsal of `hops` (or decides it will not run): called once the cluster was looked at, beside the checks. */
export async function startRehearsal(
  o: Rehearsing,
  hops: Hop[],
  bins: Record<string, Binaries>,
  look: { resuming?: boolean } = {},
): Promise<EarlyRehearsal | undefined> {
  if (o.inClone) return undefined;
  const names = hops.map(hopName).join(', ');
  const idle = { names, cancel: () => Promise.resolve() };
  if (byRehearsal(o, look) !== 'rehearsal') {
    const c = clonableOf(o);
    const why = look.resuming
      ? 'a resume: the run it resumes stopped members already'
      : everyMemberSkipped(o)
        ? `--skip-trial names every member (${o.skipTrial!.reason})`
        : c && 'why' in c
          ? c.why
          : `the ${o.driver?.type ?? ''} driver cannot clone its members here (their start settings per version are not known to opsctl)`;
    return { ...idle, line: `rehearsal: not run (${why}); each member's own trials are the proof`, notRun: why };
  }
  const bindirs = Object.fromEntries(hops.map((h) => [h.to, bins[h.to]?.dir]));
  // a verdict of this same plan (members, hops, each start's settings, the binaries) kept by an earlier --rehearse
  const { planFingerprint, reusableVerdict, verdictPath } = await import('../rehearsal/verdict.js');
  const validMs = o.rehearsalValidMs ?? VALID_MS;
  const fingerprint = o.driver ? await planFingerprint(o.driver, o.cluster.members, hops, bindirs) : undefined;
  const prior = fingerprint && !o.rehearseOnly ? reusableVerdict(verdictPath(o.dataDir, o.cluster.key), fingerprint, o.now(), validMs) : undefined;
  if (prior) {
    const ago = Math.max(1, Math.round((o.now() - Date.parse(prior.at)) / 60_000));
    return {
      ...idle,
      kept: true,
      line: `rehearsal: passed ${ago} min ago (${prior.at}, ${prior.hops}, ${s(prior.ms)}), reused: the members, their start settings and the hop binaries are unchanged (valid ${Math.round(validMs / 60_000)} min; --rehearsal-valid 0 rehearses again)`,
    };
  }
  if (o.dryRun && !o.rehearseOnly)
    return {
      ...idle,
      line: `rehearsal: before the first stop, the whole plan (${names}) runs on a clone of the cluster (alone, before the window: --rehearse)`,
    };
  const stop = new AbortController();
  let tell!: (reads: Array<[string, DataReads]> | undefined) => void;
  const judged = new Promise<string | undefined>((resolve) => (tell = (reads) => resolve(reads && JSON.stringify(reads))));
  let whole!: () => void;
  const copied = new Promise<void>((resolve) => (whole = resolve));
  const running = o.rehearse!(bindirs, { signal: stop.signal, judged, copied: whole });
  // (a rehearsal that ends before its copy was whole: nothing waits on the copy any longer)
  void running.finally(whole).catch(() => undefined);
  // (awaited by finishRehearsal or cancel: never an unhandled rejection meanwhile)
  running.catch(() => undefined);
  return {
    names,
    running,
    ...(fingerprint ? { fingerprint } : {}),
    tell,
    copied,
    cancel: async () => {
      stop.abort();
      await running.catch(() => undefined);
    },
  };
}

/**
 * When the plan's reads of the members' data (etcdutl, the leader's snapshot) begin, given the rehearsal being
 * begun (startRehearsal): once its copy is whole, so as not to lengthen the members' pause for it; at once where
 * a kept verdict of this cluster, younger than --rehearsal-valid, is there to be reused (a dry run too: it copies
 * nothing). The kept verdict's fingerprint re-reads every member's start settings (0.12 s at three members
 * through a settings template): the reads do not wait for it. Where it turns out not to match, the rehearsal runs
 * and its copy is made beside reads already under way (correct, the pause a little longer).
 */
export async function readsAfter(o: Rehearsing, starting: Promise<EarlyRehearsal | undefined>, look: { resuming?: boolean } = {}): Promise<void> {
  // (a rehearsal that fails to begin copies nothing: its error is begun()'s to throw, never an unhandled rejection here)
  const begins = starting.catch(() => undefined);
  if (o.dryRun && !o.rehearseOnly) return;
  if (!o.rehearseOnly && !o.inClone && byRehearsal(o, look) === 'rehearsal') {
    const { keptWithin, verdictPath } = await import('../rehearsal/verdict.js');
    if (keptWithin(verdictPath(o.dataDir, o.cluster.key), o.now(), o.rehearsalValidMs ?? VALID_MS)) return;
  }
  await (
    await begins
  )?.copied;
}

/** The rehearsal begun (startRehearsal); where that throws, the reads begun beside it are waited for first: nothing of them outlives the run. */
export async function begun(
  starting: Promise<EarlyRehearsal | undefined>,
  reads: ReadonlyArray<Promise<unknown> | undefined>,
): Promise<EarlyRehearsal | undefined> {
  try {
    return await starting;
  } catch (err) {
    await Promise.allSettled(reads.map((r) => r ?? Promise.resolve()));
    throw err;
  }
}

/** The plan's line of the rehearsal (and its verdict where it ran); throws UpgradeRefused where it did not pass. */
export async function finishRehearsal(o: Rehearsing, early: EarlyRehearsal | undefined): Promise<{ line: string; verdict?: RehearsalVerdict } | undefined> {
  if (!early) return undefined;
  if (early.notRun && o.rehearseOnly)
    throw new UpgradeRefused([`--rehearse: not rehearsed: ${early.notRun}`], "nothing was changed: each member's own trials are its proof (they ran above)");
  if (!early.running) return { line: early.line! };
  // (a plan that read nothing for the clone: its run reads its copy itself)
  early.tell?.(undefined);
  const names = early.names;
  const p = o.reporter.begin(`rehearsing ${names} on a clone of the cluster (every member's data copied; a writer and a /health probe on it)`);
  const v = await early.running;
  const load = v.run?.rehearsal;
  if (!v.ok) {
    p.fail(`the rehearsal did not pass (${s(v.ms)})`);
    throw new UpgradeRefused(
      [
        `rehearsal of ${names} on a clone of the cluster: ${v.reason ?? 'did not pass'}${v.tail ? `\n  the clone's last words:\n    ${v.tail.split('\n').join('\n    ')}` : ''}`,
      ],
      `nothing was stopped or changed on the cluster; ${
        v.copyFailed
          ? "fix what the copy names and run the same command, or upgrade without the rehearsal (--rehearsal-max-copy 0: each member's own trials are the proof)"
          : (v.run?.error?.hint ?? 'fix what the clone names (the same step would fail on the cluster), then run the same command')
      }`,
    );
  }
  const steps = stepTimes(v.run);
  const line = `rehearsal: passed on a clone of the cluster in ${s(v.ms)} (copy ${s(v.copyMs)}): ${names}${load ? `, ${load.writes.acked} writes acknowledged, ${load.writes.lost} lost, ${load.probes} /health probes` : ''}${steps ? `\n  the clone's steps (the real run's estimate, before its snapshots and backups): ${steps}` : ''}`;
  p.done(line);
  if (early.fingerprint) {
    const { keepVerdict, verdictPath } = await import('../rehearsal/verdict.js');
    const kept = verdictPath(o.dataDir, o.cluster.key);
    try {
      keepVerdict(kept, { at: new Date(o.now()).toISOString(), hops: names, fingerprint: early.fingerprint, ms: v.ms });
    } catch (err) {
      // (the rehearsal passed; only its reuse is lost)
      o.reporter.note(`rehearsal: its verdict was not kept (${kept}: ${(err as Error).message}); a later run rehearses again`);
    }
  }
  return { line, verdict: v };
}

/** The rehearsal's account in the run's report (--json): its time, its copy's, its load's. */
export function rehearsalAccount(v: RehearsalVerdict): RehearsalAccount {
  const load = v.run?.rehearsal;
  return { ms: v.ms, copyMs: v.copyMs, ...(load ? { writes: { acked: load.writes.acked, lost: load.writes.lost }, probes: load.probes } : {}) };
}

/**
 * Whatever `checks` do (refuse, throw), the rehearsal begun beside them is ended with them unless they pass, and
 * the reads begun before them (`reads`: a snapshot, etcdutl) are waited for: nothing of them outlives the run.
 */
export async function besideRehearsal<T>(
  early: EarlyRehearsal | undefined,
  checks: () => Promise<T>,
  reads: ReadonlyArray<Promise<unknown> | undefined> = [],
): Promise<T> {
  try {
    return await checks();
  } catch (err) {
    await Promise.all([early?.cancel() ?? Promise.resolve(), Promise.allSettled(reads.map((r) => r ?? Promise.resolve()))]);
    throw err;
  }
}

const REHEARSED =
  "proven by the rehearsal: the whole plan runs on a clone of the cluster before the first stop (every hop and fix, each member's stop and start), or the run is refused";

export const byTheRehearsal = (members: readonly { name: string }[], hop: string) =>
  members.map((m): TrialFinding => ({ member: m.name, hop, result: 'ok', detail: REHEARSED, kept: 'rehearsal' }));

/**
 * Who proves the members' data: 'clone' inside the rehearsal's clone (no trial at all), 'rehearsal' where
 * the plan is rehearsed (a first run whose driver can clone its members), else undefined (each member's
 * own data trial; a resume too: the run it resumes stopped members already).
 */
export function byRehearsal(
  o: Partial<Pick<LadderOptions, 'rehearse' | 'inClone' | 'driver' | 'skipTrial' | 'cluster' | 'rehearsalMaxCopy'>>,
  look?: { since?: string; resuming?: boolean },
): 'clone' | 'rehearsal' | undefined {
  if (o.inClone) return 'clone';
  if (everyMemberSkipped(o)) return undefined;
  const c = o.rehearse && !look?.since && !look?.resuming ? clonableOf(o) : undefined;
  return c && !('why' in c) ? 'rehearsal' : undefined;
}

const copyWhy = new Map<string, string | undefined>();

/** What the driver can clone, and whether its copy is within --rehearsal-max-copy (measured once a run: rehearsal/copy-size.ts). */
function clonableOf(
  o: Partial<Pick<LadderOptions, 'driver' | 'rehearsalMaxCopy'>>,
): ReturnType<NonNullable<NonNullable<LadderOptions['driver']>['clonable']>> | undefined {
  const c = o.driver?.clonable?.();
  if (!c || 'why' in c) return c;
  if (o.rehearsalMaxCopy === 0) return { why: '--rehearsal-max-copy 0: no copy, no rehearsal' };
  const paths = [...c.paths, ...(c.outside ?? [])];
  const key = `${o.rehearsalMaxCopy ?? ''}\0${c.bytes ?? ''}\0${paths.join('\0')}`;
  if (!copyWhy.has(key)) copyWhy.set(key, copyTooLarge(paths, { max: o.rehearsalMaxCopy, ...(c.bytes !== undefined ? { bytes: c.bytes } : {}) }));
  const why = copyWhy.get(key);
  return why ? { why } : c;
}

/** --skip-trial names every member: the operator stops them all unproven, the rehearsal included (said on the plan). */
export function everyMemberSkipped(o: Partial<Pick<LadderOptions, 'skipTrial' | 'cluster'>>): boolean {
  const skip = new Set(o.skipTrial?.members ?? []);
  return Boolean(o.cluster?.members.length) && o.cluster!.members.every((m) => skip.has(m.name));
}

/** Inside the clone: every member's start on every hop is the proof, made by the run itself. */
export function cloneFindings(members: readonly { name: string }[], list: TrialHop[], at: string): Map<string, TrialFinding[]> {
  const detail = "the rehearsal's own run: each member starts on the clone as the cluster's will";
  return new Map(
    list.flatMap((h) =>
      [h.name, dataKey(h.name)].map((k): [string, TrialFinding[]] => [
        k,
        members.map((m): TrialFinding => ({ member: m.name, hop: h.name, result: 'ok', detail, at, kept: 'rehearsal' })),
      ]),
    ),
  );
}

/**
 * The clone's steps as the real run will take them: each member's cycle (stop to healthy, summed), the
 * fixes and the cluster's own waits, in the order they ran, per hop of a ladder; undefined where the clone
 * reported none.
 */
export function stepTimes(run: RehearsalVerdict['run']): string | undefined {
  const hops = run?.hops?.length
    ? run.hops.map((h) => ({ name: `${h.from} → ${h.to}`, steps: h.report?.steps ?? [] }))
    : [{ name: '', steps: run?.steps ?? [] }];
  // (raised on the clone by a leader hand-off: on the cluster etcd's leader raises it on its own check, every 4 s)
  const raised = run?.rehearsal?.handOffs ? " (the clone's leader handed off; on the cluster up to 4 s more)" : '';
  let total = 0;
  const parts = hops.flatMap((h) => {
    const groups = new Map<string, number>();
    for (const st of h.steps) {
      if (st.status !== 'done' || st.ms === undefined) continue;
      const key = st.member ?? (st.kind === 'wait-cluster-version' ? 'cluster version' : st.kind);
      groups.set(key, (groups.get(key) ?? 0) + st.ms);
      total += st.ms;
    }
    const line = [...groups].map(([k, ms]) => `${k} ${s(ms)}${k === 'cluster version' ? raised : ''}`).join(', ');
    return line ? [h.name ? `${h.name}: ${line}` : line] : [];
  });
  return parts.length ? `${parts.join('; ')}; ${s(total)} in all` : undefined;
}
