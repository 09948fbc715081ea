import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { NetworkError, OpsError } from '../../core/errors.js';
import { GatewayError } from '../../kv/cluster/gateway-errors.js';
import { KvClient } from '../../kv/cluster/client.js';
import { resolveCluster, timeouts } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './get.spec.js';

export type GetOptions = OptionsOf<typeof spec>;

/** `kv get KEY`: the value on stdout (exit 1 when the key does not exist). */
export async function run(opts: GetOptions, ctx: Context): Promise<CommandResult> {
  const { cluster, session } = await resolveCluster(ctx, opts);
  const t = timeouts(opts);
  let last: unknown;
  for (const m of cluster.members) {
    try {
      const kv = await new KvClient(m.endpoint, { timeoutMs: t.requestMs, debug: ctx.debugSink, session }).get(opts.kvKey);
      if (!kv) throw new OpsError(`key "${opts.kvKey}" not found`, 1, { code: 'not_found', hint: 'write it with: opsctl kv put KEY VALUE' });
      return { data: kv, text: kv.value };
    } catch (err) {
      if (err instanceof OpsError && !(err instanceof NetworkError) && !(err instanceof GatewayError && err.status >= 500)) throw err;
      last = err;
    }
  }
  throw new NetworkError(`no member answered: ${(last as Error)?.message}`, { hint: 'check the cluster with: opsctl kv health' });
}
