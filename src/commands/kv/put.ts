import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { UsageError } from '../../core/errors.js';
import { GatewayError } from '../../kv/cluster/gateway-errors.js';
import { leaseHex, parseId } from '../../kv/ops/ids.js';
import { kvJson, put } from '../../kv/ops/keys.js';
import { kvLines } from '../../kv/ops/simple.js';
import { readFileFlag } from '../lib/file-flag.js';
import { etcdSaid, reach, shaped } from './lib/ops.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './put.spec.js';

export type Options = OptionsOf<typeof spec>;

const HOW = 'opsctl kv put KEY VALUE, opsctl kv put KEY - (stdin), or opsctl kv put KEY --file FILE';

/** The value to write: the argument, stdin (`-`), or --file; exactly one of them (none with --ignore-value). */
async function valueOf(opts: Options, ctx: Context): Promise<string | undefined> {
  if (opts.value !== undefined && opts.file !== undefined) {
    throw new UsageError('kv put: give the value as an argument or with --file, not both', { field: '--file', hint: HOW });
  }
  if (opts.ignoreValue) {
    if (opts.value !== undefined || opts.file !== undefined)
      throw new UsageError('kv put --ignore-value: the key keeps its value, so give none', {
        field: '--ignore-value',
        hint: 'opsctl kv put KEY --ignore-value --lease ID (the lease changes, the value stays)',
      });
    return undefined;
  }
  if (opts.file !== undefined) return readFileFlag(opts.file, ctx, 'a file holding the value');
  if (opts.value === '-') return readFileFlag('-', ctx, 'a file holding the value');
  if (opts.value === undefined) throw new UsageError(`kv put ${opts.kvKey}: no value`, { field: 'value', hint: HOW });
  return opts.value;
}

/**
 * `kv put KEY VALUE|-|--file F` through the JSON gateway, with etcdctl's --lease (hex), --prev-kv,
 * --ignore-value and --ignore-lease. The first member that answers writes it; a refusal (too large, auth,
 * a lease or key that is not there) is final.
 */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  if (opts.lease !== undefined && opts.ignoreLease)
    throw new UsageError('--lease and --ignore-lease: give one of them', { field: '--ignore-lease', hint: '--ignore-lease keeps the lease the key has' });
  const lease = opts.lease === undefined ? undefined : parseId(opts.lease, '--lease');
  const value = await valueOf(opts, ctx);
  const r = await reach(ctx, opts);
  const req = { key: opts.kvKey, value, lease, prevKv: opts.prevKv, ignoreValue: opts.ignoreValue, ignoreLease: opts.ignoreLease };
  const done = await r
    .any(async (c, m) => ({ ...(await put(c, req)), member: m.name }))
    .catch((err) => {
      // too large, auth: as the client says it (with its fix); the rest in etcd's words
      if (err instanceof GatewayError && /request is too large/i.test(err.serverMessage)) throw err;
      return etcdSaid(err, `put ${opts.kvKey}`, [
        [/requested lease not found/, `lease ${leaseHex(lease)} is not there (expired or revoked): grant one with opsctl kv lease grant TTL`],
        [/key not found/, '--ignore-value and --ignore-lease keep what the key has: it must exist; put a value first'],
      ]);
    });
  const prev = done.prevKv;
  return shaped(opts, {
    data: {
      key: opts.kvKey,
      revision: Number(done.revision),
      member: done.member,
      ...(lease ? { lease: leaseHex(lease) } : {}),
      ...(opts.prevKv ? { prev_kv: prev ? kvJson(prev) : null } : {}),
    },
    // etcdctl's lines: OK, then the key and value before it
    simple: ['OK', ...(prev ? kvLines(prev) : [])],
    plain: opts.prevKv ? (prev ? [prev.value] : []) : [],
    message: `put ${opts.kvKey} (revision ${done.revision}) via ${done.member}`,
  });
}
