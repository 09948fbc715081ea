import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { NetworkError, OpsError, UsageError } from '../../core/errors.js';
import { GatewayError } from '../../kv/cluster/gateway-errors.js';
import { KvClient } from '../../kv/cluster/client.js';
import { readFileFlag } from '../lib/file-flag.js';
import { resolveCluster, timeouts } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './put.spec.js';

export type PutOptions = OptionsOf<typeof spec>;

/** The value to write: the argument, stdin (`-`), or --file; exactly one of them. */
async function valueOf(opts: PutOptions, ctx: Context): Promise<string> {
  if (opts.value !== undefined && opts.file !== undefined) {
    throw new UsageError('kv put: give the value as an argument or with --file, not both', {
      field: '--file',
      hint: 'opsctl kv put KEY VALUE, opsctl kv put KEY - (stdin), or opsctl kv put KEY --file FILE',
    });
  }
  if (opts.file !== undefined) return readFileFlag(opts.file, ctx, 'a file holding the value');
  if (opts.value === '-') return readFileFlag('-', ctx, 'a file holding the value');
  if (opts.value === undefined) {
    throw new UsageError(`kv put ${opts.kvKey}: no value`, {
      field: 'value',
      hint: 'opsctl kv put KEY VALUE, opsctl kv put KEY - (stdin), or opsctl kv put KEY --file FILE',
    });
  }
  return opts.value;
}

/**
 * `kv put KEY VALUE|-|--file F` through the JSON gateway (base64 {key, value}; 3.3 /v3beta, 3.2 /v3alpha,
 * redirects followed). Tries the members in turn; a server-side refusal (e.g. "request is too
 * large") is final.
 */
export async function run(opts: PutOptions, ctx: Context): Promise<CommandResult> {
  const value = await valueOf(opts, ctx);
  const { cluster, session } = await resolveCluster(ctx, opts);
  const t = timeouts(opts);
  let last: unknown;
  for (const m of cluster.members) {
    try {
      const r = await new KvClient(m.endpoint, { timeoutMs: t.requestMs, debug: ctx.debugSink, session }).put(opts.kvKey, value);
      return { data: { key: opts.kvKey, revision: r.revision, member: m.name }, message: `put ${opts.kvKey} (revision ${r.revision}) via ${m.name}`, text: '' };
    } catch (err) {
      // A refusal another member would repeat (too large, auth, TLS settings) is final.
      if (err instanceof GatewayError && err.status < 500) throw err;
      if (err instanceof OpsError && /^(auth_|tls_)/.test(err.code)) throw err;
      last = err;
    }
  }
  throw new NetworkError(`no member accepted the write: ${(last as Error)?.message}`, { hint: 'check the cluster with: opsctl kv health' });
}
