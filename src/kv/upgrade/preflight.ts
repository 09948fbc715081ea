/** Before anything changes: the journal to resume, the whole cluster looked at and judged, the plan's warnings, the staged binaries. */
import { OpsError } from '../../core/errors.js';
import type { MemberDriver, MemberTarget } from '../drivers/driver.js';
import { isResumable, memberMayBeDown, type Journal } from '../journal/journal.js';
import { readJournal } from '../journal/read.js';
import { checkJournalPlan } from '../journal/plan.js';
import { authEnabled, observeCluster } from '../cluster/observe.js';
import { compareMinor } from '../cluster/parse.js';
import { leaderIds, planUpgrade } from './planner.js';
import { findEtcdctl } from '../cluster/etcdctl.js';
import { membershipProblems, readMembership, type Membership } from '../cluster/membership.js';
import type { ClusterObservation, UpgradePlan } from '../cluster/types.js';
import { sleep } from '../cluster/wait.js';
import { HASHKV_MIN } from '../cluster/hashkv.js';
import { spacePreflight, spaceWarning } from './backup-guard.js';
import { UpgradeRefused, type BackupRoom, type Destination, type UpgradeOptions, type Waits, type WayBack } from './options.js';

/**
 * The driver's stage template (the command driver's `stage`): the hop's binary staged on every member
 * still to start, and its version checked, before the first stop: a failure refuses with nothing stopped.
 */
export async function stageBinaries(
  o: Pick<UpgradeOptions, Destination | 'cluster' | 'targetBin' | 'reporter'>,
  driver: MemberDriver,
  upgrading: Array<{ name: string }>,
  journal: Journal | undefined,
): Promise<void> {
  if (!driver.stage) return;
  const todo = upgrading.filter((m) => !journal?.steps.some((s) => s.member === m.name && s.kind === 'start' && s.status === 'done'));
  const p = o.reporter.begin(`stage: the ${o.to} binary on ${todo.length} member(s) before any stop`);
  const reasons: string[] = [];
  const lines: string[] = [];
  for (const pm of todo) {
    const m = o.cluster.members.find((x) => x.name === pm.name)!;
    const own = o.allowSameVersion ? driver.current(m)?.binDir : undefined;
    const target: MemberTarget = { version: o.to, binDir: o.targetBin ?? journal?.target_bin ?? own };
    await driver.stage(m, target).then(
      (d) => lines.push(`${m.name}: ${d}`),
      (err: Error) => reasons.push(`member ${m.name}: staging its ${o.to} binary failed: ${err.message}`),
    );
  }
  if (reasons.length) {
    p.fail(`stage: ${reasons.length} of ${todo.length} member(s) failed`);
    throw new UpgradeRefused(
      reasons,
      'nothing was stopped: fix the stage template or the hosts (the staged binary must print its etcd --version), then run the same command',
      o.downgrade ? 'downgrade' : 'upgrade',
    );
  }
  p.done(`stage: ${lines.join('; ')}`);
}

/** The recorded run this one resumes, if any (checked when read; one for another target refuses). */
export function resumableJournal(o: Pick<UpgradeOptions, Destination | WayBack | 'cluster'>, file: string): Journal | undefined {
  // JournalInvalid names the file and the fix, and the file is never rewritten: never start afresh
  // over a record that may be all that says which members moved.
  const journal = readJournal(file);
  if (!isResumable(journal)) return undefined;
  checkJournalPlan(file, journal, o.cluster.members, o.rollbackCommand);
  if (journal.target !== o.to || journal.allowSameVersion !== o.allowSameVersion || Boolean(journal.downgrade) !== Boolean(o.downgrade)) {
    const verb = journal.downgrade ? 'downgrade' : 'upgrade';
    throw new OpsError(`an unfinished ${verb} to ${journal.target} of this cluster is recorded in ${file}`, 1, {
      code: 'journal_conflict',
      hint: `finish it with: opsctl kv ${verb} --to ${journal.target}${journal.allowSameVersion ? ' --allow-same-version' : ''}   or undo it with: ${o.rollbackCommand}`,
    });
  }
  return journal;
}

/** What the plan must say out loud before anyone agrees to it. */
export function planWarnings(size: number, o: Pick<UpgradeOptions, 'noBackup' | 'driver'>): string[] {
  const out: string[] = [];
  if (size <= 2) {
    out.push(
      `this cluster has ${size} member${size === 1 ? '' : 's'}: every restart loses quorum (no writes, and no reads that need the leader, until the member is back); a 3-member cluster upgrades without downtime`,
    );
  }
  if (o.noBackup) out.push('--no-backup: the data dirs are not backed up before each start (only the v3 snapshot is taken, and v2 data is not in it)');
  const space = spaceWarning(o, o.driver);
  if (space) out.push(space);
  return out;
}

export interface Preflight {
  obs: ClusterObservation;
  observedAt: number;
  plan: UpgradePlan;
  membership: Membership;
  /** The plan's line on the disk the hop's backups take, and how long they live (when it can be measured). */
  disk?: string;
}

/** Refuses (exit 1, nothing changed) unless the whole cluster is fit; the plan otherwise. */
export async function preflight(
  o: Pick<UpgradeOptions, Waits | Destination | WayBack | BackupRoom | 'reporter'>,
  file: string,
  first: ReturnType<typeof observeCluster>,
  journal: Journal | undefined,
): Promise<Preflight> {
  const t = o.timeouts;
  const pre = o.reporter.begin(`pre-flight: checking ${o.cluster.members.length} members`);
  const refuse = (status: string, reasons: string[], hint?: string): never => {
    pre.fail(`pre-flight: ${status}`);
    throw new UpgradeRefused(
      reasons,
      hint ??
        (journal
          ? `fix the cluster, then run the same command to resume (journal ${file}), or roll back: ${o.rollbackCommand}`
          : 'fix the cluster first; nothing was changed'),
      o.downgrade ? 'downgrade' : 'upgrade',
    );
  };
  const obs = await electionSettled(o, await first);
  // The member list from the cluster itself: asked with the first look, else of a healthy member
  // (at once with the auth question below). The list was asked of the first member: with a list, there is one.
  const [firstSeen] = obs.members;
  const listed =
    obs.memberList && firstSeen
      ? Promise.resolve({ list: obs.memberList, from: firstSeen.name })
      : readMembership(obs.members, { session: o.session, timeoutMs: t.requestMs, debug: o.debug });
  // Whether auth is on matters only with a member on 3.2 before 3.2.31 (the seed's lease-revoke
  // corruption): one more request then, none otherwise.
  if (obs.members.some((m) => /^3\.2\.([0-9]|[12][0-9]|30)$/.test(m.serverVersion ?? ''))) {
    obs.authEnabled = await authEnabled(obs.members, { session: o.session, timeoutMs: t.requestMs, debug: o.debug });
  }
  const observedAt = o.now();
  const result = planUpgrade(obs, {
    to: o.to,
    allowSameVersion: o.allowSameVersion,
    mayBeDown: journal ? memberMayBeDown(journal) : undefined,
    downgrade: o.downgrade,
  });
  const membership = await listed;
  // (When the planner already refused because no member is healthy, "no one to ask" adds nothing.)
  const whole = !result.ok && 'error' in membership ? [] : await membershipProblems(o.cluster, obs.members, membership, o.session, t.requestMs);
  if (!result.ok || whole.length) refuse('refused', [...(result.ok ? [] : result.reasons), ...whole]);
  const plan = (result as Extract<typeof result, { ok: true }>).plan;
  // Every backup still to be taken fits where it goes (each member is checked again right before its stop).
  const toBackUp = plan.members
    .filter((m) => m.action !== 'skip' && (!journal || journal.steps.some((s) => s.member === m.name && s.kind === 'backup-data' && s.status === 'pending')))
    .map((m) => o.cluster.members.find((s) => s.name === m.name)!);
  const space = await spacePreflight(o, o.driver, toBackUp).catch((err: Error) => ({
    problems: [`measuring the space for the data-dir backups failed: ${err.message}`],
    disk: undefined,
  }));
  if (space.problems.length)
    refuse('too little space for the backups', space.problems, 'nothing was stopped: free space for the backups first (or pass --no-backup)');
  const { disk } = space;
  const list = membership as Membership;
  pre.done(
    `pre-flight: ${o.cluster.members.length} members healthy, the cluster's member list agrees (${list.list.length}), one leader, cluster version ${plan.clusterVersion}, no alarms`,
  );
  return { obs, observedAt, plan, membership: list, ...(disk ? { disk } : {}) };
}

/**
 * Whether the members that answer are between leaders: naming different ones, or one of them none yet (an
 * election under way, e.g. a leader that missed its heartbeats on a busy host). It settles within a few election
 * timeouts; refusing at once would turn a moment's election into a failed maintenance step.
 */
function electing(obs: ClusterObservation): boolean {
  const answering = obs.members.filter((m) => m.reachable);
  // (a member that answers with no leader while the others name one has not heard the new leader yet: a resume
  // right after a kill, its in-flight member down, found one so, 2 ms after an election, in a crash sweep)
  return answering.length > 0 && (leaderIds(obs.members).size !== 1 || answering.some((m) => m.healthDetail === 'no leader'));
}

type Look = Awaited<ReturnType<typeof observeCluster>>;

/** Looks again while an election is under way, up to the healthy timeout (at most 15 s); the pre-flight then judges the last look. */
async function electionSettled(o: Pick<UpgradeOptions, Waits>, obs: Look): Promise<Look> {
  const deadline = o.now() + Math.min(o.timeouts.healthyMs, 15_000);
  let seen = obs;
  while (electing(seen) && o.now() < deadline && !o.signal.aborted) {
    o.debug?.('[kv] pre-flight: the members are between leaders (an election): looking again');
    await sleep(o.timeouts.pollMs, o.signal);
    seen = await observeCluster(o.cluster.members, { session: o.session, timeoutMs: o.timeouts.requestMs, debug: o.debug, memberList: true });
  }
  return seen;
}

/** The plan's line on the KV hash comparison, with what cannot be checked and why. */
export function hashPlanLine(o: Pick<UpgradeOptions, 'driver' | 'etcdctl' | 'to'>, obs: ClusterObservation, source: string): string {
  const real = obs.members.some((m) => m.real) || Boolean(o.driver?.etcdFromDir);
  const head = "consistency: every member's KV hash at one revision (HashKV) compared before the first stop and after each member is back";
  if (real && !findEtcdctl(o.etcdctl))
    return `${head}\n  not checked: HashKV is gRPC only (the gateway's /maintenance/hash hashes the whole db file): install etcdctl 3.3+ (etcd-client) or pass --etcdctl PATH`;
  if (compareMinor(source, HASHKV_MIN) < 0)
    return `${head}\n  not checked: HashKV needs etcd 3.3+ (the members run ${source}): compared among the members on ${o.to} once two of them are`;
  return head;
}
