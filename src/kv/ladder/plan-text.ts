/** The ladder's plan as text: the three-line summary, then every hop, its members and its checks (each finding once). */
import type { ClusterObservation } from '../cluster/types.js';
import { capabilitiesOf } from '../drivers/driver.js';
import { renderChecks } from '../rules/index.js';
import { planSummary } from '../rules/summary.js';
import type { CheckRow, HopFacts } from '../rules/types.js';
import { leaderIds, orderMembers } from '../upgrade/planner.js';
import { strOf } from './checks.js';
import { fixesBefore, v2fixPlan } from './fixes.js';
import { type Binaries, hopPlanText, settlePlan } from './facts.js';
import { hopName, type Hop } from './plan.js';
import type { LadderOptions } from './record.js';

/** The members in the order each hop takes them (followers by name, the leader last), and the leader. */
function memberOrder(obs: ClusterObservation): { members: string[]; leader?: string } {
  const leaders = leaderIds(obs.members);
  const ordered = orderMembers(obs.members.map((m) => ({ name: m.name, wasLeader: leaders.has(m.id) })));
  return { members: ordered.map((m) => m.name), leader: ordered.find((m) => m.wasLeader)?.name };
}

/** The ladder plan's first three lines (from the hop it starts or resumes at). */
export function ladderSummary(
  o: Pick<LadderOptions, 'to' | 'strict' | 'dryRun'>,
  obs: ClusterObservation,
  hops: Hop[],
  { at, rows, resuming }: { at: number; rows: CheckRow[]; resuming: boolean },
): string[] {
  const left = hops.slice(at);
  return planSummary({
    kind: 'upgrade',
    from: left[0]?.from ?? o.to,
    to: o.to,
    hops: left.map((h) => (h.patch ? `${h.to} (patch)` : h.to)),
    ...memberOrder(obs),
    rows,
    warnings: [],
    strict: o.strict,
    dryRun: o.dryRun,
    resuming,
  });
}

/** A one-hop plan that its checks block: the summary, the members as they would go, each finding once and the notes (--dry-run shows it before refusing). */
export function blockedHopText(
  o: Pick<LadderOptions, 'strict' | 'dryRun' | 'settle' | 'noBackup'>,
  obs: ClusterObservation,
  hop: Hop,
  checks: CheckRow[],
  notes: string[],
): string {
  const summary = planSummary({
    kind: hop.patch ? 'restart' : 'upgrade',
    from: hop.from,
    to: hop.to,
    hops: [hop.to],
    ...memberOrder(obs),
    rows: checks,
    warnings: [],
    strict: o.strict,
    dryRun: o.dryRun,
  });
  const settle = o.settle === 'auto' ? 'auto' : `${o.settle} ms`;
  return [
    ...summary,
    hopPlanText(obs, hop, { first: true, settle, noBackup: Boolean(o.noBackup) }).replace(/^ {2}/gm, ''),
    `  checks (rulebook of ${hopName(hop)}):`,
    ...renderChecks(checks),
    ...notes.map((n) => `  ${n}`),
  ].join('\n');
}

/** The plan: every hop, every member, every check with its result (a passed rule in one line). */
export function ladderText(
  o: Pick<LadderOptions, 'to' | 'driver' | 'noBackup' | 'settle' | 'cluster' | 'fixV2store'>,
  obs: ClusterObservation,
  hops: Hop[],
  { rows, bins, at, settle, v2 }: { rows: CheckRow[][]; bins: Record<string, Binaries>; at: number; settle: string; v2: HopFacts['v2'] },
): string {
  const lines = [
    `Ladder: ${hops[0]!.from} → ${o.to} in ${hops.length} hops, one rolling upgrade per minor; the cluster version is confirmed at each hop's target before the next${at ? ` (resuming at hop ${at + 1})` : ''}`,
  ];
  hops.forEach((h, i) => {
    const b = bins[h.to];
    const can = capabilitiesOf(o.driver);
    const bin = can.releases
      ? `${can.what} ${strOf(b?.version) ?? h.to}`
      : b?.dir
        ? `${b.dir} (etcd ${strOf(b.version) ?? '?'})`
        : "the driver's start template ({version})";
    lines.push(`Hop ${i + 1}/${hops.length}: ${hopName(h)}${i < at ? ': done' : ''} — binaries: ${bin}`);
    if (i < at) return;
    lines.push(hopPlanText(obs, h, { first: i === at, settle, noBackup: Boolean(o.noBackup) }));
    lines.push(`    ${settlePlan(o, h, v2)}`);
    if (fixesBefore(h)) lines.push(`    ${v2fixPlan(o, h)}`);
    const r = rows[i] ?? [];
    lines.push(r.length ? '    checks:' : '    checks: none for a patch hop (the same minor)');
    lines.push(...renderChecks(r, '      '));
  });
  return lines.join('\n');
}
