import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import { leaseHex, parseId } from '../../kv/ops/ids.js';
import { revoke } from '../../kv/ops/lease.js';
import { revokeLine } from '../../kv/ops/simple.js';
import { etcdSaid, reach, shaped } from './lib/ops.js';
import type { spec } from './lease-revoke.spec.js';

/** `kv lease revoke ID`: the lease and every key attached to it are gone. */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  const id = parseId(opts.leaseId, 'lease-id');
  const r = await reach(ctx, opts);
  await r
    .any((c) => revoke(c, id))
    .catch((err) =>
      etcdSaid(err, `lease revoke ${leaseHex(id)}`, [
        [
          /requested lease not found/,
          `lease ${leaseHex(id)} is not found: it expired, was revoked, or never was (opsctl kv lease list shows the leases there are)`,
        ],
      ]),
    );
  return shaped(opts, { data: { id: leaseHex(id), revoked: true }, simple: [revokeLine(id)] });
}
