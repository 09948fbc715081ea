import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import { leaseHex, parseId } from '../../kv/ops/ids.js';
import { timeToLive } from '../../kv/ops/lease.js';
import { timeToLiveLine } from '../../kv/ops/simple.js';
import { reach, shaped } from './lib/ops.js';
import type { spec } from './lease-timetolive.spec.js';

/** `kv lease timetolive ID [--keys]`: granted and remaining TTL; a lease etcd no longer has "already expired" (exit 0, as etcdctl). */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  const id = parseId(opts.leaseId, 'lease-id');
  const r = await reach(ctx, opts);
  const t = await r.any((c) => timeToLive(c, id, { keys: Boolean(opts.keys) }));
  const data = { id: leaseHex(t.id), expired: t.expired, granted_ttl: t.grantedTtl, remaining_ttl: t.ttl, ...(t.keys ? { keys: t.keys } : {}) };
  if (t.expired) return shaped(opts, { data, simple: [timeToLiveLine(t)] });
  return shaped(opts, { data, columns: ['id', 'granted_ttl', 'remaining_ttl', ...(t.keys ? ['keys'] : [])], simple: [timeToLiveLine(t)] });
}
