import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import { OpsError } from '../../core/errors.js';
import { sleep } from '../../kv/cluster/wait.js';
import { leaseHex, parseId } from '../../kv/ops/ids.js';
import { keepAliveOnce } from '../../kv/ops/lease.js';
import { keepAliveLine } from '../../kv/ops/simple.js';
import { reach, shaped } from './lib/ops.js';
import type { spec } from './lease-keep-alive.spec.js';

/**
 * `kv lease keep-alive ID [--once]`: renews the lease at a third of its TTL, a line per renewal,
 * until Ctrl-C (exit 130) or the lease is gone (exit 1, as etcdctl: "expired or revoked").
 */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  const id = parseId(opts.leaseId, 'lease-id');
  const r = await reach(ctx, opts);
  const gone = () => new OpsError(`lease ${leaseHex(id)} expired or revoked.`, 1, { code: 'lease_gone', hint: 'grant a new one: opsctl kv lease grant TTL' });
  const k = await r.any((c) => keepAliveOnce(c, id));
  if (k.ttl <= 0) throw gone();
  if (opts.once) return shaped(opts, { data: { id: leaseHex(id), ttl: k.ttl }, columns: ['id', 'ttl'], simple: [keepAliveLine(id, k.ttl)] });
  const line = (ttl: number) => (opts.writeOut === 'json' ? JSON.stringify({ id: leaseHex(id), ttl }) : keepAliveLine(id, ttl));
  ctx.io.out(line(k.ttl));
  for (let ttl = k.ttl; ;) {
    await sleep(Math.max(500, (ttl * 1000) / 3), ctx.abort.signal);
    ttl = (await r.any((c) => keepAliveOnce(c, id))).ttl;
    if (ttl <= 0) throw gone();
    ctx.io.out(line(ttl));
  }
}
