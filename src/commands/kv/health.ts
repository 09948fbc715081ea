import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { KvClient } from '../../kv/cluster/client.js';
import { resolveCluster, timeouts } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './health.spec.js';

export type Options = OptionsOf<typeof spec>;

/** `kv health`: each member's /health (lenient), one row per member; exit 1 when any is unhealthy. */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  const { cluster, session } = await resolveCluster(ctx, opts);
  const t = timeouts(opts);
  const rows = await Promise.all(
    cluster.members.map(async (m) => {
      const t0 = performance.now();
      try {
        const h = await new KvClient(m.endpoint, { timeoutMs: t.requestMs, debug: ctx.debugSink, session }).health();
        return { name: m.name, endpoint: m.endpoint, healthy: h.healthy, detail: h.detail, took_ms: Math.round(performance.now() - t0) };
      } catch (err) {
        return { name: m.name, endpoint: m.endpoint, healthy: false, detail: (err as Error).message, took_ms: Math.round(performance.now() - t0) };
      }
    }),
  );
  const sick = rows.filter((r) => !r.healthy);
  return {
    data: rows,
    columns: [
      { key: 'name' },
      { key: 'endpoint' },
      { key: 'healthy' },
      { key: 'detail' },
      { key: 'took_ms', header: 'took', get: (r: { took_ms: number }) => `${r.took_ms} ms` },
    ],
    exitCode: sick.length ? 1 : 0,
    message: sick.length ? undefined : `${rows.length} members healthy`,
  };
}
