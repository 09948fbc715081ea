import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import { listAlarms } from '../../kv/ops/maintenance.js';
import { activeAlarmsError, healthLine } from '../../kv/ops/simple.js';
import { hostPort, reachEach, shaped } from './lib/ops.js';
import type { spec } from './endpoint-health.spec.js';

/**
 * `kv endpoint health`: each member as etcdctl checks it: a quorum read (a linearizable range of the
 * key "health", confirmed by the leader's quorum; a read refused by auth still proves the member
 * serves) and no raised alarm. Exit 1 when any member is unhealthy.
 */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  const { r, members } = await reachEach(ctx, opts);
  const rows = await Promise.all(
    members.map(async (m) => {
      const c = r.client(m);
      const t0 = process.hrtime.bigint();
      const read = await c.quorumRead().catch((err: Error) => ({ healthy: false, detail: err.message }));
      const took = Number(process.hrtime.bigint() - t0);
      const alarms = read.healthy ? await listAlarms(c).catch(() => []) : [];
      const error = !read.healthy ? read.detail : alarms.length ? activeAlarmsError(alarms) : undefined;
      return { endpoint: hostPort(m), name: m.name, healthy: !error, took_ms: Math.round(took / 1e5) / 10, took_ns: took, error: error ?? '' };
    }),
  );
  return shaped(opts, {
    data: rows.map(({ took_ns: _ns, ...row }) => row),
    columns: ['endpoint', 'healthy', { key: 'took_ms', header: 'took', get: (x: (typeof rows)[number]) => `${x.took_ms} ms` }, 'error'],
    simple: rows.map((x) => healthLine(x.endpoint, x.healthy, x.took_ns, x.error)),
    exitCode: rows.some((x) => !x.healthy) ? 1 : 0,
  });
}
