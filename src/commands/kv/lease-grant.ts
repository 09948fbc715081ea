import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import { UsageError } from '../../core/errors.js';
import { leaseHex } from '../../kv/ops/ids.js';
import { grant } from '../../kv/ops/lease.js';
import { grantLine } from '../../kv/ops/simple.js';
import { reach, shaped } from './lib/ops.js';
import type { spec } from './lease-grant.spec.js';

/**
 * `kv lease grant TTL`: a new lease (etcdctl: "lease 694d77aa9e38260f granted with TTL(60s)"). On a terminal
 * the id and TTL as a record; piped (no -w), etcdctl's one line, so `| awk '{print $2}'` gets the id as
 * from etcdctl (--json or --jq .id for the fields).
 */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  const ttl = Number(opts.ttl);
  if (!/^\d+$/.test(opts.ttl) || ttl < 1 || ttl > 9_000_000_000)
    throw new UsageError(`TTL: "${opts.ttl}" is not a number of seconds`, { field: 'ttl', hint: 'give the seconds as a whole number, e.g. 60' });
  const r = await reach(ctx, opts);
  const g = await r.any((c) => grant(c, ttl));
  const data = { id: leaseHex(g.id), ttl: g.ttl };
  if (!opts.writeOut && !ctx.io.isStdoutTTY) return { data, text: grantLine(g.id, g.ttl) };
  return shaped(opts, { data, columns: ['id', 'ttl'], simple: [grantLine(g.id, g.ttl)] });
}
