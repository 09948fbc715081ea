import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import { listAlarms } from '../../kv/ops/maintenance.js';
import { activeAlarmsError, healthLine } from '../../kv/ops/simple.js';
import { eachExit, hostPort, reachEach, shaped } from './lib/ops.js';
import type { spec } from './endpoint-health.spec.js';

/**
 * `kv endpoint health`: each member as etcdctl checks it: a quorum read (a linearizable range of the
 * key "health", confirmed by the leader's quorum; a read refused by auth still proves the member
 * serves) and no raised alarm (an alarm list that cannot be read counts as unhealthy, as in etcdctl 3.5+). Exit 1 when any member is unhealthy, 4 when one refused the credentials.
 */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  const { r, members } = await reachEach(ctx, opts, { named: ctx.jsonOutput });
  const checked = await Promise.all(
    members.map(async (m) => {
      const c = r.client(m);
      const t0 = process.hrtime.bigint();
      const read = await c.quorumRead().catch((err: Error) => ({ healthy: false, detail: err.message, err }));
      const took = Number(process.hrtime.bigint() - t0);
      // as etcdctl 3.5+: a raised alarm makes the member unhealthy, and so does an alarm list it cannot give
      const alarms = read.healthy ? await listAlarms(c).catch(() => undefined) : [];
      const error = !read.healthy ? read.detail : !alarms ? 'Unable to fetch the alarm list' : alarms.length ? activeAlarmsError(alarms) : undefined;
      const row = { endpoint: hostPort(m), name: m.name, healthy: !error, took_ms: Math.round(took / 1e5) / 10, took_ns: took, error: error ?? '' };
      return { row, err: 'err' in read ? read.err : error };
    }),
  );
  const rows = checked.map((x) => x.row);
  return shaped(opts, {
    data: rows.map(({ took_ns: _ns, ...row }) => row),
    columns: ['endpoint', 'healthy', { key: 'took_ms', header: 'took', get: (x: (typeof rows)[number]) => `${x.took_ms} ms` }, 'error'],
    simple: rows.map((x) => healthLine({ ep: x.endpoint, ok: x.healthy, tookNs: x.took_ns, error: x.error })),
    // exit 1 when any member is unhealthy (as etcdctl), 4 when one refused the credentials
    exitCode: eachExit(
      ctx,
      checked.map((x) => x.err),
    ),
  });
}
