import { resolve } from 'node:path';
import type { Context } from '../../context.js';
import { OpsError, UsageError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { defaultCacheDir, getRelease, isReleaseVersion, RELEASE_BASE, ReleaseError, releaseUrl } from '../../kv/release/release.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './release-get.spec.js';

export type Options = OptionsOf<typeof spec>;

const HINTS: Record<ReleaseError['code'], string> = {
  download: 'check --from and the network (the archive is fetched from BASE/vVERSION/), then run it again',
  sums: "the release's SHA256SUMS must list the archive: check the version and --from (a mirror must carry SHA256SUMS too)",
  checksum: 'the archive is not the one the release published (a bad mirror or a broken download): nothing was kept; run it again or use another --from',
  archive: 'the archive is damaged or not an etcd release: nothing was kept; run it again or use another --from',
  version: 'the archive holds another etcd than its name says: nothing was kept; check the version and --from',
};

/** `kv release get VERSION`: the official etcd release archive, verified against SHA256SUMS and by its own --version, into the cache. */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  if (!isReleaseVersion(opts.version)) {
    throw new UsageError(`VERSION: ${JSON.stringify(opts.version)} is not an etcd release version`, {
      field: 'VERSION',
      hint: 'give a full version, e.g. opsctl kv release get 3.5.21',
    });
  }
  try {
    if (opts.from !== undefined) releaseUrl(opts.from, opts.version, 'SHA256SUMS');
  } catch (err) {
    const why = err instanceof ReleaseError ? err.message : `${JSON.stringify(opts.from)} is not a URL`;
    throw new UsageError(`--from: ${why}`, { field: 'from', hint: `give a mirror laid out like ${RELEASE_BASE} (URL/vVERSION/SHA256SUMS), over https` });
  }
  const cacheDir = opts.cache ? resolve(ctx.cwd, opts.cache) : defaultCacheDir(ctx.paths.data);
  ctx.handlesInterrupt = true;
  // the mirror's requests go through core/http's shared agent: closed when the command ends (destroyed after Ctrl-C)
  ctx.onCleanup(async () => (await import('../../core/http.js')).closeDefaultDispatcher({ interrupted: ctx.abort.signal.aborted }));
  try {
    const r = await getRelease({
      version: opts.version,
      from: opts.from,
      cacheDir,
      signal: ctx.abort.signal,
      note: ctx.jsonOutput ? undefined : (line) => ctx.io.err(line),
      debug: ctx.debugSink,
      timeoutMs: Number(ctx.env.OPSCTL_HTTP_TIMEOUT_MS) || undefined,
    });
    return {
      data: { version: r.version, dir: r.dir, sha256: r.sha256 },
      text: `${r.dir}\n`,
      message: r.cached
        ? `etcd ${r.version} is already in the cache (SHA-256 ${r.sha256}): ${r.dir}`
        : `etcd ${r.version} verified (SHA256SUMS and etcd --version) and cached in ${r.dir}`,
    };
  } catch (err) {
    if (err instanceof ReleaseError)
      throw new OpsError(`etcd ${opts.version} refused: ${err.message}`, 1, { code: `release_${err.code}`, hint: HINTS[err.code] });
    throw err;
  }
}
