import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { journalPath } from '../../kv/journal/journal.js';
import { observeCluster } from '../../kv/cluster/observe.js';
import { lastRestorePoint } from '../../kv/upgrade/restore-point.js';
import { resolveCluster, timeouts } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './status.spec.js';

export type StatusOptions = OptionsOf<typeof spec>;

/** `kv status`: id (uint64, exact), versions, leader, revision and health of each member, plus alarms. */
export async function run(opts: StatusOptions, ctx: Context): Promise<CommandResult> {
  if (opts.report) return report(opts, ctx);
  const { cluster, session } = await resolveCluster(ctx, opts);
  const t = timeouts(opts);
  const obs = await observeCluster(cluster.members, { session, timeoutMs: t.requestMs, debug: ctx.debugSink });
  const rows = obs.members.map((m) => ({
    name: m.name,
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
  const rp = lastRestorePoint(ctx.paths.data, cluster.key);
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

/** `kv status --report FILE`: the last upgrade's report, after the fact, from the journal alone (the members' health is not asked: it works with the cluster down). */
async function report(opts: StatusOptions, ctx: Context): Promise<CommandResult> {
  const { reportPath, writeReport } = await import('./lib/report-file.js');
  const path = reportPath(ctx, opts.report!);
  const { cluster } = await resolveCluster(ctx, opts);
  const doc = await writeReport(path, journalPath(ctx.paths.data, cluster.key));
  const down = doc.members
    .map((m) => `${m.name} ${m.down ? (m.down.ms === undefined ? 'down, not back' : `down ${(m.down.ms / 1000).toFixed(1)} s`) : 'not stopped'}`)
    .join(', ');
  return { data: doc, text: `upgrade ${doc.run} ${doc.source} → ${doc.target}: ${doc.status}; ${down}`, message: `report written to ${path}` };
}
