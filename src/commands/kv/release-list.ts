import { resolve } from 'node:path';
import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { defaultCacheDir, listReleases } from '../../kv/release/release.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './release-list.spec.js';

export type Options = OptionsOf<typeof spec>;

/** `kv release list`: the releases `kv release get` verified and cached, newest first. */
export function run(opts: Options, ctx: Context): Promise<CommandResult> {
  const cacheDir = opts.cache ? resolve(ctx.cwd, opts.cache) : defaultCacheDir(ctx.paths.data);
  const rows = listReleases(cacheDir).map((r) => ({
    version: r.version,
    dir: r.dir,
    sha256: r.sha256,
    bytes: r.bytes,
    fetchedAt: r.fetchedAt,
    source: r.source,
  }));
  return Promise.resolve({
    data: rows,
    columns: [{ key: 'version' }, { key: 'dir' }, { key: 'bytes' }, { key: 'fetchedAt' }, { key: 'sha256' }],
    message: rows.length ? `${rows.length} release(s) in ${cacheDir}` : `no release cached in ${cacheDir} (opsctl kv release get VERSION)`,
  });
}
