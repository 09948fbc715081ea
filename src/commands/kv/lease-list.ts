import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import { leaseHex } from '../../kv/ops/ids.js';
import { list } from '../../kv/ops/lease.js';
import { leasesLines } from '../../kv/ops/simple.js';
import { reach, shaped } from './lib/ops.js';
import type { spec } from './lease-list.spec.js';

/** `kv lease list`: every lease (etcd 3.3+; a 3.2 member is refused naming its version). */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  const r = await reach(ctx, opts);
  const ids = await r.any((c) => list(c));
  return shaped(opts, { data: ids.map((id) => ({ id: leaseHex(id) })), columns: ['id'], simple: leasesLines(ids), message: `${ids.length} leases` });
}
