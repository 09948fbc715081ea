/**
 * Give back what was taken (issue 57): a flow that finds the cluster worse than its journal expects (a member
 * down that the journal never stopped) starts the member the journal stopped itself, on the version it last ran
 * healthy, without waiting for the others, and says what remains: each member down on its own is the
 * operator's to look at, never opsctl's to start. kv rollback (restore/rollback.ts) and the upgrade's resume
 * (giveBackFirst, before it refuses anything else) say it alike.
 */
import { OpsError } from '../../core/errors.js';
import type { ClusterObservation } from '../cluster/types.js';
import { inFlightOf, touchedMembers, writeJournal, type Journal } from '../journal/journal.js';
import { recordPutBack } from '../journal/runs.js';
import { acquireLock } from '../upgrade/lock.js';
import { describeTarget, previousTarget, startAndWait } from '../upgrade/on-failure.js';
import type { Look, StepEnv, UpgradeOptions } from '../upgrade/options.js';

/** A member down (it does not answer at all) that the journal never stopped. */
export interface LeftDown {
  name: string;
  endpoint: string;
  /** What it does now: "does not answer (connect ECONNREFUSED …)", "not healthy (…)". */
  state: string;
}

/**
 * The members down that opsctl did not take (`took`: the members its journal stopped). One that answers but is
 * not healthy is not among them: without a quorum none is, and the member given back restores it.
 */
export function leftDown(obs: ClusterObservation, took: ReadonlySet<string>): LeftDown[] {
  return obs.members
    .filter((m) => !took.has(m.name) && !m.reachable)
    .map((m) => ({ name: m.name, endpoint: m.endpoint, state: `does not answer (${m.error ?? 'no answer'})` }));
}

/** The command that shows a member's state (the CLI gives its own, with the cluster's TLS and selection). */
export type LookCommand = (m: LeftDown) => string;

export const defaultLook: LookCommand = (m) => `opsctl kv endpoint health --endpoints ${m.endpoint}`;

/** What remains for the operator, one line per member left down. */
export function leftLines(left: readonly LeftDown[], look: LookCommand = defaultLook): string[] {
  return left.map(
    (m) =>
      `${m.name} ${m.state}: opsctl did not stop it, so it is not opsctl's to start: bring it back on its host (its service manager, its log), then look: ${look(m)}`,
  );
}

/**
 * The upgrade's resume, when the cluster is worse than its journal expects (a member down that the journal
 * never stopped): the member the journal stopped and has not started on the target (its data as its own
 * version left it) is started on that version first, and waited for alone (the other may be lost for good),
 * journalled as a put-back (`puttingBack`: a kill in it is finished by the next run, whatever it finds);
 * then its steps go back to pending, the journal saying what runs: it is untouched. Returns what was given
 * back and what remains, or undefined when there is nothing to give back (the journal's member is up, or every
 * member down is the journal's). A dry run only says what it would do.
 */
export async function giveBackInFlight(
  env: StepEnv<'cluster' | 'now' | 'session' | 'timeouts' | 'reporter'>,
  obs: ClusterObservation,
  save: () => Promise<void>,
  o: { dryRun?: boolean; look?: LookCommand },
): Promise<{ gave?: string; left: LeftDown[]; lines: string[] } | undefined> {
  const j = env.journal;
  const name = j.puttingBack?.member ?? inFlightOf(j.steps);
  const m = name ? env.o.cluster.members.find((x) => x.name === name) : undefined;
  const left = leftDown(obs, new Set(touchedMembers(j)));
  if (!m || !left.length) return undefined;
  const prev = previousTarget(env, m);
  const lines = leftLines(left, o.look);
  if (obs.members.find((x) => x.name === m.name)?.healthy && !j.puttingBack) return { left, lines };
  if (o.dryRun) return { gave: `would start ${m.name} on ${describeTarget(prev)}, the version it last ran healthy (--dry-run: not started)`, left, lines };
  const start = j.steps.find((s) => s.member === m.name && s.kind === 'start');
  j.puttingBack ??= {
    member: m.name,
    step: start?.id ?? `${m.name}/start`,
    reason: `given back: ${left.map((x) => x.name).join(', ')} down, not stopped by opsctl`,
    restored: true,
    data: 'its data dir as its stop left it',
  };
  await save();
  const p = env.o.reporter.begin(
    `${m.name}: giving it back on ${describeTarget(prev)}, the version it last ran healthy (opsctl stopped it; ${left.map((x) => x.name).join(', ')} down on ${left.length === 1 ? 'its' : 'their'} own)`,
  );
  try {
    await startAndWait(env, m, prev, 'member');
  } catch (err) {
    p.fail(`${m.name}: could not give it back on ${prev.version}: ${(err as Error).message}`);
    throw err;
  }
  const downFrom = j.steps.find((s) => s.member === m.name && s.kind === 'stop')?.startedAt;
  recordPutBack(j, {
    member: m.name,
    to: prev.version,
    at: new Date(env.o.now()).toISOString(),
    downFrom,
    detail: `given back: ${j.puttingBack?.reason ?? ''}`,
  });
  for (const s of j.steps)
    if (s.member === m.name && s.kind !== 'snapshot') Object.assign(s, { status: 'pending', error: undefined, startedAt: undefined, walBefore: undefined });
  delete j.puttingBack;
  await save();
  const gave = `gave back ${m.name}: started on ${describeTarget(prev)}, the version it last ran healthy, and healthy (its upgrade starts again from its gate)`;
  p.done(`${m.name}: ${gave.replace(`gave back ${m.name}: `, '')}`);
  return { gave, left, lines };
}

/** The upgrade's resume: give back first, then halt (exit 3) saying what remains; --dry-run says what it would give back. */
export async function giveBackFirst(
  o: Pick<UpgradeOptions, Look | 'driver' | 'dryRun' | 'reporter' | 'now' | 'lockStaleMs'> & { rollbackCommand?: string },
  file: string,
  j: Journal,
  obs: ClusterObservation,
): Promise<void> {
  if (!o.driver) return;
  const unlock = o.dryRun ? () => Promise.resolve() : await acquireLock(file, o);
  let r: Awaited<ReturnType<typeof giveBackInFlight>>;
  try {
    const save = () => writeJournal(file, j, o.now(), { trace: o.debug });
    r = await giveBackInFlight({ o, driver: o.driver, journal: j, real: false, membership: [], checkpoint: save }, obs, save, { dryRun: o.dryRun });
  } finally {
    await unlock();
  }
  if (!r) return;
  const names = r.left.map((x) => x.name).join(', ');
  const given = Boolean(r.gave && !o.dryRun);
  throw new OpsError(
    `upgrade ${given ? 'halted' : 'refused'}: ${r.left.length === 1 ? 'a member' : 'members'} the journal never stopped ${r.left.length === 1 ? 'is' : 'are'} down (${names})${r.gave ? `; ${r.gave}` : ''}:\n  - ${r.lines.join('\n  - ')}`,
    given ? 3 : 1,
    {
      code: 'given_back',
      hint: `bring ${names} back on ${r.left.length === 1 ? 'its host' : 'their hosts'}, then run the same command to resume the upgrade${o.rollbackCommand ? ` (or undo it: ${o.rollbackCommand})` : ''}${given ? '' : '; nothing was stopped or changed by this run'}`,
    },
  );
}
