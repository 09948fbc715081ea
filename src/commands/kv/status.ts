import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { observeCluster } from '../../kv/cluster/observe.js';
import type { RestorePoint } from '../../kv/upgrade/restore-point.js';
import { applyNames, nameMembers, reach } from './lib/ops.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './status.spec.js';

export type Options = OptionsOf<typeof spec>;

/** `kv status`: id (uint64, exact), versions, leader, revision and health of each member, plus alarms. */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  if (opts.report) return report(opts, ctx);
  // The cluster as the etcdctl-like verbs find it (no member driver: kv status only looks). Each member
  // on one connection, its requests in turn; members given by endpoint are named from the member list the
  // first member gives after its own requests (else from the first other member that answers).
  const r = await reach(ctx, opts);
  const obs = await observeCluster(r.members, { session: r.session, timeoutMs: r.requestMs, debug: ctx.debugSink, memberList: r.unnamed, inTurn: true });
  if (r.unnamed) {
    if (obs.memberList) applyNames(r.members, obs.memberList);
    else
      await nameMembers(
        r.members,
        (m) => r.client(m, Math.min(2000, r.requestMs)),
        (line) => ctx.debug(line),
        r.members.filter((_, i) => obs.members[i]!.reachable),
      );
  }
  const rows = obs.members.map((m, i) => ({
    name: r.members[i]!.name,
    endpoint: m.endpoint,
    // in hex, as etcdctl and every other kv verb print it (kv member remove takes it, or the name)
    id: m.id ? BigInt(m.id).toString(16) : null,
    server: m.serverVersion ?? null,
    cluster: m.clusterVersion ?? null,
    leader: Boolean(m.id && m.leaderId === m.id),
    revision: m.revision ?? null,
    healthy: m.healthy,
    detail: m.error ?? m.healthDetail,
  }));
  for (const a of obs.alarms) ctx.io.warn(`alarm ${a.alarm} on member ${/^\d+$/.test(a.memberId) ? BigInt(a.memberId).toString(16) : a.memberId}`);
  // a member that is down or unhealthy says why, on the terminal as in a pipe (the table's last column too)
  for (const r of rows) if (!r.healthy) ctx.io.warn(`${r.name} (${r.endpoint}): ${r.detail}`);
  // The last upgrade's restore point (kv restore --snapshot rebuilds from it): on stderr, and on
  // every JSON row (the rows stay the shape scripts already read).
  const rp = await restorePointOf(
    ctx,
    r.members.map((m) => m.endpoint),
  );
  if (rp)
    ctx.io.info(
      `restore point: ${rp.file} (revision ${rp.revision}, ${rp.liveKeys ?? rp.keys} keys, sha256 ${rp.sha256.slice(0, 12)}…, taken before ${rp.member} was stopped)`,
    );
  for (const r of rows) Object.assign(r, { restorePoint: rp ?? null });
  return {
    data: rows,
    columns: [
      ...['name', 'endpoint', 'id', 'server', 'cluster', 'leader', 'revision', 'healthy'].map((key) => ({ key })),
      { key: 'reason', get: (r: (typeof rows)[number]) => (r.healthy ? '' : r.detail) },
    ],
    exitCode: rows.some((r) => !r.healthy) || obs.alarms.length ? 1 : 0,
  };
}

/** The last upgrade's restore point of this cluster, read from its journal (none when opsctl never upgraded a cluster here). */
async function restorePointOf(ctx: Context, endpoints: string[]): Promise<RestorePoint | undefined> {
  // (where no upgrade ever ran here, no journal code is loaded: kv status stays within its start-up budget, kv-startup e2e)
  if (!existsSync(join(ctx.paths.data, 'kv', 'journals'))) return undefined;
  const [{ clusterKey }, { lastRestorePoint }] = await Promise.all([import('../../kv/journal/journal.js'), import('../../kv/upgrade/restore-point.js')]);
  return lastRestorePoint(ctx.paths.data, clusterKey(endpoints));
}

/** `kv status --report FILE`: the last upgrade's report, after the fact, from the journal alone (the members' health is not asked: it works with the cluster down). */
async function report(opts: Options, ctx: Context): Promise<CommandResult> {
  const [{ reportPath, writeReport }, { resolveCluster }, { journalPath }] = await Promise.all([
    import('./lib/report-file.js'),
    import('./lib/shared.js'),
    import('../../kv/journal/journal.js'),
  ]);
  const path = reportPath(ctx, opts.report!);
  const { cluster } = await resolveCluster(ctx, opts);
  const doc = await writeReport(path, journalPath(ctx.paths.data, cluster.key));
  const down = doc.members
    .map((m) => `${m.name} ${m.down ? (m.down.ms === undefined ? 'down, not back' : `down ${(m.down.ms / 1000).toFixed(1)} s`) : 'not stopped'}`)
    .join(', ');
  return { data: doc, text: `upgrade ${doc.run} ${doc.source} → ${doc.target}: ${doc.status}; ${down}`, message: `report written to ${path}` };
}
