import { resolve } from 'node:path';
import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { snapshotStatus } from '../../kv/snapshot-status.js';

export interface SnapshotStatusOptions {
  file: string;
  etcdctl?: string;
}

/**
 * `kv snapshot status FILE`: the SHA-256 trailer checked, then what `etcdctl snapshot status`
 * prints (hash, revision, total keys, total size), plus the file's SHA-256.
 */
export async function run(opts: SnapshotStatusOptions, ctx: Context): Promise<CommandResult> {
  const s = await snapshotStatus(resolve(ctx.cwd, opts.file), { exec: await ctx.exec(), etcdctl: opts.etcdctl });
  return {
    data: s,
    columns: [
      { key: 'hash', header: 'HASH' },
      { key: 'revision', header: 'REVISION' },
      { key: 'totalKey', header: 'TOTAL KEYS' },
      { key: 'totalSize', header: 'TOTAL SIZE' },
      { key: 'sha256', header: 'SHA-256' },
      { key: 'kind', header: 'KIND' },
    ],
  };
}
