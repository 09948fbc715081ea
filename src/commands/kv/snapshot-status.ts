import { resolve } from 'node:path';
import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { snapshotStatus } from '../../kv/snapshot-status.js';

export interface SnapshotStatusOptions {
  file: string;
}

/**
 * `kv snapshot status FILE`: the SHA-256 trailer checked, then what `etcdctl snapshot status`
 * prints (hash, revision, total keys, total size), plus the live keys, the cluster version, the
 * members and the file's SHA-256.
 */
export async function run(opts: SnapshotStatusOptions, ctx: Context): Promise<CommandResult> {
  const s = await snapshotStatus(resolve(ctx.cwd, opts.file));
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
  };
}
