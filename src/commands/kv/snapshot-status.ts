import { resolve } from 'node:path';
import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { UsageError } from '../../core/errors.js';
import { findEtcdctl } from '../../kv/cluster/etcdctl.js';
import { snapshotTool } from '../../kv/snapshot/crosscheck.js';
import { snapshotStatus } from '../../kv/snapshot/status.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './snapshot-status.spec.js';

export type Options = OptionsOf<typeof spec>;

/**
 * `kv snapshot status FILE`: the SHA-256 trailer checked and every page and bucket a restore reads
 * walked from disk (constant memory), cross-checked with etcd's own tool where one is installed;
 * then what `etcdctl snapshot status` prints (hash, revision, total keys, total size), plus the live
 * keys, the cluster version, the members and the file's SHA-256.
 */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  const given = typeof opts.etcdctl === 'string' ? resolve(ctx.cwd, opts.etcdctl) : undefined;
  const etcdctl = opts.etcdctl === false ? undefined : findEtcdctl(given);
  if (given && etcdctl !== given)
    throw new UsageError(`--etcdctl: ${given} does not exist`, { field: '--etcdctl', hint: 'give the path of an etcdctl binary, or leave it out' });
  const tool = snapshotTool(etcdctl, await ctx.exec());
  const s = await snapshotStatus(resolve(ctx.cwd, opts.file), { crossCheck: tool, signal: ctx.abort.signal });
  return {
    data: s,
    columns: [
      { key: 'hash', header: 'HASH' },
      { key: 'revision', header: 'REVISION' },
      { key: 'totalKey', header: 'TOTAL KEYS' },
      { key: 'totalSize', header: 'TOTAL SIZE' },
      { key: 'liveKeys', header: 'LIVE KEYS' },
      { key: 'clusterVersion', header: 'CLUSTER VERSION' },
      { key: 'members', header: 'MEMBERS', get: (r: typeof s) => r.members.map((m) => m.name).join(',') },
      { key: 'sha256', header: 'SHA-256' },
      { key: 'kind', header: 'KIND' },
    ],
    message: `verified: ${s.verified}`,
  };
}
