import { compareMinor, minor, nextMinor, previousMinor } from '../cluster/parse.js';
import { clientChecklist } from '../rules/clients.js';
import type { ClusterObservation, MemberPlan, UpgradePlan } from '../cluster/types.js';

export interface PlanOptions {
  to: string;
  /** Restart every member on the same version (a rolling restart, e.g. real etcd 3.4 → 3.4). */
  allowSameVersion?: boolean;
  /** A member that may be down because an interrupted upgrade stopped it (resume). */
  mayBeDown?: string;
  /**
   * etcd 3.6's downgrade (kv downgrade): members go from the next minor down to `to`; the cluster
   * version is `to` once the downgrade is enabled (before it, on a dry run, the next minor).
   */
  downgrade?: boolean;
}

export type PlanResult = { ok: true; plan: UpgradePlan } | { ok: false; reasons: string[] };

/** The leaders the reachable members name (0, no leader, left out): one when they agree, none or several during an election. */
export function leaderIds(members: ClusterObservation['members']): Set<string> {
  return new Set(members.filter((m) => m.reachable && m.leaderId && m.leaderId !== '0').map((m) => m.leaderId!));
}

/**
 * The pure planner: cluster state → the ordered plan, or every reason to refuse. Refuses unless
 * every member is reachable and healthy, exactly one leader is agreed, every server is at the source
 * minor or already at the target, the cluster version is at the source minor and no alarm is raised.
 */
export function planUpgrade(state: ClusterObservation, opts: PlanOptions): PlanResult {
  const target = opts.to;
  const same = Boolean(opts.allowSameVersion);
  let source: string;
  try {
    source = same ? target : opts.downgrade ? nextMinor(target) : previousMinor(target);
  } catch (err) {
    return { ok: false, reasons: [`--to ${target}: ${(err as Error).message}`] };
  }
  const reasons: string[] = [];
  if (state.members.length === 0) reasons.push('no members found');
  const present = state.members.filter((m) => !(opts.mayBeDown === m.name && !m.reachable));
  for (const m of state.members) {
    // (the member the interrupted run took down: down, or up but not yet proven healthy, as the run left it)
    if (m.name === opts.mayBeDown && (!m.reachable || !m.healthy)) continue;
    if (!m.reachable) reasons.push(unreachable(m));
    else if (!m.healthy) reasons.push(`member ${m.name} (${m.endpoint}) is not healthy: ${m.healthDetail}`);
  }
  const quorum = Math.floor(state.members.length / 2) + 1;
  if (opts.mayBeDown && present.filter((m) => m.healthy).length < quorum) reasons.push(`fewer than ${quorum} healthy members: no quorum`);

  const leaders = leaderIds(present);
  const leaderId = leaders.size === 1 ? [...leaders][0] : undefined;
  if (present.some((m) => m.reachable) && leaders.size === 0) reasons.push('no member reports a leader');
  if (leaders.size > 1) reasons.push(`members disagree on the leader (${[...leaders].join(', ')}): wait for the election to settle`);
  if (leaderId && !state.members.some((m) => m.id === leaderId)) reasons.push(`the leader ${leaderId} is not one of the members given: pass every member`);

  let downgrade = false;
  for (const m of present.filter((x) => x.reachable)) {
    const v = minor(m.serverVersion);
    if (!v) reasons.push(`member ${m.name} reports no server version`);
    else if (!same && !opts.downgrade && compareMinor(v, target) > 0) {
      downgrade = true;
      reasons.push(
        `member ${m.name} runs ${m.serverVersion}, newer than ${target}: that is a downgrade, which kv upgrade does not do ` +
          `(to undo an upgrade whose cluster version has not moved yet: opsctl kv rollback)`,
      );
    } else if (v !== source && v !== target) {
      reasons.push(
        `member ${m.name} runs ${m.serverVersion}: an upgrade to ${target} must start from ${source}${compareMinor(v, source) < 0 ? ` (upgrade to ${source} first)` : ''}`,
      );
    }
  }
  const clusterVersions = new Set(present.filter((m) => m.reachable && m.clusterVersion).map((m) => minor(m.clusterVersion) ?? m.clusterVersion!));
  const allAtTarget = present.every((m) => minor(m.serverVersion) === target);
  // Every member on the target and the leader's move of the cluster version applied on some members
  // only (a look between its raft entry's apply on one member and on the next, as after a kill there):
  // the cluster version is still the source, and the run's wait for the target sees the move through.
  const moving = allAtTarget && !same && !opts.downgrade && clusterVersions.size === 2 && clusterVersions.has(source) && clusterVersions.has(target);
  const clusterVersion = moving ? source : clusterVersions.size === 1 ? [...clusterVersions][0] : undefined;
  if (clusterVersions.size > 1 && !moving) reasons.push(`members disagree on the cluster version (${[...clusterVersions].join(', ')})`);
  else if (opts.downgrade) {
    if (clusterVersion !== target && !(clusterVersion === source && present.every((m) => minor(m.serverVersion) === source))) {
      reasons.push(
        `the cluster version is ${clusterVersion ?? 'not decided'}, not ${target} (the downgrade is enabled first: etcdctl downgrade enable ${target})`,
      );
    }
  } else if (!downgrade && clusterVersion !== source && !(clusterVersion === target && allAtTarget && !same)) {
    reasons.push(`the cluster version is ${clusterVersion ?? 'not decided'}, not ${source}`);
  }
  for (const a of state.alarms) reasons.push(`alarm ${a.alarm} raised on member ${a.memberId}: disarm it first (etcdctl alarm disarm)`);
  if (reasons.length > 0) return { ok: false, reasons };

  const members: MemberPlan[] = state.members.map((m) => {
    const at = minor(m.serverVersion) ?? source;
    const wasLeader = m.id === leaderId;
    if (same)
      return {
        name: m.name,
        id: m.id,
        endpoint: m.endpoint,
        fromVersion: m.serverVersion ?? '?',
        action: 'restart',
        reason: 'rolling restart on the same version',
        wasLeader,
      };
    if (at === target)
      return { name: m.name, id: m.id, endpoint: m.endpoint, fromVersion: m.serverVersion ?? '?', action: 'skip', reason: `already at ${target}`, wasLeader };
    return { name: m.name, id: m.id, endpoint: m.endpoint, fromVersion: m.serverVersion ?? source, action: 'upgrade', reason: `${at} → ${target}`, wasLeader };
  });
  return {
    ok: true,
    plan: { source, target, members: orderMembers(members), clusterVersion: clusterVersion ?? source, ...(opts.downgrade ? { downgrade: true } : {}) },
  };
}

/**
 * Followers first (in name order), the leader last; skipped members stay listed where they fall.
 * Names compare by code unit, not localeCompare: the first localeCompare of a process loads ICU's
 * collator, ~6 ms of the pre-flight, for member names that are plain identifiers anyway.
 */
export function orderMembers<T extends { name: string; wasLeader: boolean }>(members: T[]): T[] {
  return [...members].sort((a, b) => Number(a.wasLeader) - Number(b.wasLeader) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * Which pending member to handle next: never the current leader while another pending member
 * remains (leadership can move during an upgrade), otherwise the first in plan order.
 */
export function nextMember<T extends { name: string; id: string }>(pending: T[], currentLeaderId: string | undefined): T | undefined {
  return pending.find((m) => m.id !== currentLeaderId) ?? pending[0];
}

/** A human rendering of the plan. */
export function describePlan(plan: UpgradePlan, settle: string, opts: { noBackup?: boolean } = {}): string {
  const lines = [
    `Plan: ${plan.source === plan.target ? `rolling restart on ${plan.target}` : `${plan.downgrade ? 'downgrade' : 'upgrade'} ${plan.source} → ${plan.target}`}, one member at a time (cluster version ${plan.clusterVersion})`,
  ];
  let n = 0;
  const backup = opts.noBackup ? 'no data-dir backup (--no-backup)' : 'back up the data dir';
  // (the same steps for every member: said once)
  if (plan.members.some((m) => m.action !== 'skip'))
    lines.push(
      `  each member: snapshot (from the leader) + verify → stop → wait until gone → ${backup} → start ${plan.target} → wait healthy + caught up → settle ${settle}`,
    );
  for (const m of plan.members) {
    if (m.action === 'skip') {
      lines.push(`  -  ${m.name} (${m.endpoint}): skip, ${m.reason}`);
      continue;
    }
    n++;
    lines.push(`  ${n}. ${m.name} (${m.endpoint})${m.wasLeader ? ' [leader, last]' : ''}: ${m.reason}`);
  }
  lines.push(
    plan.downgrade
      ? `  then: the cluster version confirmed at ${plan.target} on every member, final health pass`
      : `  then: wait for the cluster version to reach ${plan.target}, final health pass`,
  );
  if (!plan.downgrade) lines.push(...clientChecklist(plan.source, plan.target));
  return lines.join('\n');
}

/** Why a member that did not answer stops a plan: its name, endpoint and the error. */
export function unreachable(m: ClusterObservation['members'][number]): string {
  return `member ${m.name} (${m.endpoint}) is not reachable: ${m.error ?? 'no answer'}`;
}
