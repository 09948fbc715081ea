// Puts a finished build in place whole: `npm run build` (dist/) and `npm run package` (out/'s files).
import { readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** How many builds moved aside are kept: an opsctl that started on the one just replaced still loads its chunks from it (bin/load.cjs). */
const KEEP = 1;

/**
 * Renames the finished directory `stage` to `target` (both on one file system): `target` first moves aside to
 * `<oldPrefix><time>-<pid>-<n>`, then `stage` takes its name. A process that looks in between finds no
 * `target` for that instant, and the launcher waits it out (bin/opsctl.cjs). Another build that put its own
 * `target` in place between the two renames is moved aside as well, and the rename tried again. Of the
 * directories moved aside, the newest KEEP stay and the older ones are removed.
 */
export function swapInto(stage, target, oldPrefix) {
  const dir = dirname(target);
  for (let attempt = 0; ; attempt++) {
    try {
      renameSync(target, join(dir, `${oldPrefix}${Date.now()}-${process.pid}-${attempt}`));
    } catch (err) {
      if (err.code !== 'ENOENT') throw err;
    }
    try {
      renameSync(stage, target);
      break;
    } catch (err) {
      if ((err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') || attempt >= 20) throw err;
    }
  }
  const aside = readdirSync(dir)
    .filter((n) => n.startsWith(oldPrefix))
    .map((n) => ({ n, at: Number(n.slice(oldPrefix.length).split('-')[0]) || 0 }))
    .sort((a, b) => b.at - a.at);
  for (const { n } of aside.slice(KEEP)) rmSync(join(dir, n), { recursive: true, force: true });
}
