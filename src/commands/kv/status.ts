import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { observeCluster } from '../../kv/observe.js';
import { resolveCluster, timeouts, type ClusterFlags } from './shared.js';

export type StatusOptions = ClusterFlags;

/** `kv status`: id (uint64, exact), versions, leader, revision and health of each member, plus alarms. */
export async function run(opts: StatusOptions, ctx: Context): Promise<CommandResult> {
  const { cluster, session } = await resolveCluster(ctx, opts);
  const t = timeouts(opts);
  const obs = await observeCluster(cluster.members, { session, timeoutMs: t.requestMs, debug: ctx.debugSink });
  const rows = obs.members.map((m) => ({
    name: m.name,
    endpoint: m.endpoint,
    id: m.id || null,
    server: m.serverVersion ?? null,
    cluster: m.clusterVersion ?? null,
    leader: Boolean(m.id && m.leaderId === m.id),
    revision: m.revision ?? null,
    healthy: m.healthy,
    detail: m.error ?? m.healthDetail,
  }));
  for (const a of obs.alarms) ctx.io.warn(`alarm ${a.alarm} on member ${a.memberId}`);
  return {
    data: rows,
    columns: ['name', 'endpoint', 'id', 'server', 'cluster', 'leader', 'revision', 'healthy'].map((key) => ({ key })),
    exitCode: rows.some((r) => !r.healthy) || obs.alarms.length ? 1 : 0,
  };
}
