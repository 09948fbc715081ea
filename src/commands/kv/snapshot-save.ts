import { resolve } from 'node:path';
import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { OpsError, UsageError } from '../../core/errors.js';
import { KvClient } from '../../kv/client.js';
import { findEtcdctl, saveSnapshot } from '../../kv/snapshot.js';
import { normalizeEndpoint, resolveCluster, timeouts, type ClusterFlags, type TimeoutFlags } from './shared.js';

export interface SnapshotSaveOptions extends ClusterFlags, TimeoutFlags {
  file: string;
  /** Take it from this member (default: the first healthy one). */
  endpoint?: string;
  via: 'auto' | 'etcdctl' | 'gateway';
  etcdctl?: string;
}

/**
 * `kv snapshot save FILE`: from ONE healthy member, via etcdctl (clean env, ETCDCTL_API=3, a
 * timeout) for real etcd when installed, else the gateway's snapshot stream; verified (SHA-256
 * trailer, revision ≥ the one sampled before) before FILE appears.
 */
export async function run(opts: SnapshotSaveOptions, ctx: Context): Promise<CommandResult> {
  if (!['auto', 'etcdctl', 'gateway'].includes(opts.via)) throw new UsageError(`--via: "${opts.via}" is not one of auto, etcdctl, gateway`, { field: '--via' });
  const t = timeouts(opts);
  let endpoint = opts.endpoint ? normalizeEndpoint(opts.endpoint, '--endpoint') : undefined;
  if (!endpoint) {
    const { cluster } = await resolveCluster(ctx, opts);
    for (const m of cluster.members) {
      const ok = await new KvClient(m.endpoint, { timeoutMs: t.requestMs }).health().then((h) => h.healthy, () => false);
      if (ok) {
        endpoint = m.endpoint;
        break;
      }
    }
    if (!endpoint) throw new OpsError('no healthy member to take a snapshot from', 1, { hint: 'check with: opsctl kv health' });
  }
  const c = new KvClient(endpoint, { timeoutMs: t.requestMs, debug: ctx.debugSink });
  const real = (await c.version()).real;
  const etcdctl = opts.via === 'gateway' ? undefined : findEtcdctl(opts.etcdctl);
  if (opts.via === 'etcdctl' && !etcdctl) throw new UsageError('--via etcdctl: etcdctl not found', { hint: 'install etcd-client or pass --etcdctl PATH' });
  const before = (await c.status()).revision;
  const snap = await saveSnapshot({
    endpoint,
    file: resolve(ctx.cwd, opts.file),
    timeoutMs: t.snapshotMs,
    etcdctl: opts.via === 'etcdctl' || (opts.via === 'auto' && real) ? etcdctl : undefined,
    exec: await ctx.exec(),
    minRevision: before,
  }).catch((err) => {
    throw err instanceof OpsError ? err : new OpsError((err as Error).message, 1, { code: 'snapshot', hint: 'try another member with --endpoint, or check it with opsctl kv status' });
  });
  return {
    data: { ...snap, endpoint, sha256: 'verified', sampledRevision: before },
    message: `snapshot saved to ${snap.file}: ${snap.bytes} bytes via ${snap.via}, SHA-256 trailer verified, revision ${snap.revision} (≥ ${before})`,
    text: '',
  };
}
