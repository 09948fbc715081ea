import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { KvClient } from '../../kv/cluster/client.js';
import { resolveCluster, timeouts } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './version.spec.js';

export type Options = OptionsOf<typeof spec>;

/** `kv version`: server and cluster version of each member (kvserver/kvcluster or etcdserver/etcdcluster). */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  const { cluster, session } = await resolveCluster(ctx, opts);
  const t = timeouts(opts);
  const rows = await Promise.all(
    cluster.members.map(async (m) => {
      try {
        const v = await new KvClient(m.endpoint, { timeoutMs: t.requestMs, debug: ctx.debugSink, session }).version();
        return { name: m.name, endpoint: m.endpoint, server: v.server, cluster: v.cluster, error: null };
      } catch (err) {
        return { name: m.name, endpoint: m.endpoint, server: null, cluster: null, error: (err as Error).message };
      }
    }),
  );
  return {
    data: rows,
    columns: [{ key: 'name' }, { key: 'endpoint' }, { key: 'server' }, { key: 'cluster' }, { key: 'error' }],
    exitCode: rows.some((r) => r.error) ? 1 : 0,
  };
}
