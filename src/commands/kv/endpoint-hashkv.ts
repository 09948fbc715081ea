import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import { OpsError } from '../../core/errors.js';
import { findEtcdctl } from '../../kv/cluster/etcdctl.js';
import { etcdctlHashes } from '../../kv/cluster/hashkv.js';
import { compareMinor, minor } from '../../kv/cluster/parse.js';
import { gatewayHashKv, hashKvOnGateway } from '../../kv/ops/maintenance.js';
import { serverVersion } from '../../kv/ops/versions.js';
import { hostPort, reachEach, shaped } from './lib/ops.js';
import type { spec } from './endpoint-hashkv.spec.js';

/**
 * `kv endpoint hashkv [--rev R]`: each member's KV hash. 3.5 and later answer it on their gateway; 3.3
 * and 3.4 only over gRPC, so through etcdctl (refused, with the fix, where there is none); 3.2 has no HashKV.
 */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  if (opts.rev !== undefined && !/^\d+$/.test(opts.rev)) throw new OpsError(`--rev: "${opts.rev}" is not a revision`, 2, { hint: 'give a whole number' });
  const { r, members } = await reachEach(ctx, opts);
  const rows = await Promise.all(
    members.map(async (m) => {
      const c = r.client(m);
      try {
        const v = await serverVersion(c);
        if (compareMinor(minor(v) ?? '0.0', '3.3') < 0) return { endpoint: hostPort(m), error: `etcd ${v} has no HashKV (it came in 3.3)` };
        if (hashKvOnGateway(v)) {
          const h = await gatewayHashKv(c, opts.rev);
          return {
            endpoint: hostPort(m),
            hash: h.hash,
            compact_revision: Number(h.compactRevision),
            ...(h.hashRevision ? { hash_revision: Number(h.hashRevision) } : {}),
          };
        }
        const etcdctl = findEtcdctl(opts.etcdctl);
        if (!etcdctl) return { endpoint: hostPort(m), error: `etcd ${v} answers HashKV over gRPC only: install etcdctl (etcd-client) or pass --etcdctl PATH` };
        const exec = await ctx.exec();
        const got = (await etcdctlHashes({ session: r.session, timeoutMs: r.requestMs, exec, etcdctl, real: true }, [m], opts.rev ?? '0')).get(m.name)!;
        return 'hash' in got ? { endpoint: hostPort(m), hash: got.hash } : { endpoint: hostPort(m), error: got.error };
      } catch (err) {
        return { endpoint: hostPort(m), error: (err as Error).message };
      }
    }),
  );
  for (const x of rows) if ('error' in x) ctx.io.warn(`Failed to get the hash of endpoint ${x.endpoint} (${x.error})`);
  return shaped(opts, {
    data: rows,
    columns: ['endpoint', 'hash', 'hash_revision', 'compact_revision', 'error'],
    // (3.6's etcdctl adds the hash's revision; 3.3 to 3.5's print the endpoint and the hash)
    simple: rows.flatMap((x) => ('hash' in x ? [[x.endpoint, x.hash, ...('hash_revision' in x ? [String(x.hash_revision)] : [])].join(', ')] : [])),
    exitCode: rows.some((x) => 'error' in x) ? 1 : 0,
  });
}
