/**
 * Where a fetched member's copies are mounted in the clone (kv/rehearsal/clone-away.ts): its paths as its host
 * has them, which this machine may not have (a data dir /var/lib/etcd on the hosts only). A bind mount needs
 * its target: each missing one is made here for the clone's run (a directory or an empty file, as the copy is),
 * its missing parents too, and exactly what was made is removed after it, never anything that was here before.
 */
import { lstat, mkdir, readdir, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** Makes each of `paths` that is missing (as the first copy under `copies` that has it is: a directory or a file); what was made, parents first. */
export async function makeMountPoints(paths: readonly string[], copies: readonly string[]): Promise<string[]> {
  const made: string[] = [];
  for (const p of paths) {
    if (await exists(p)) continue;
    let dir = true;
    for (const c of copies) {
      const st = await stat(join(c, p)).catch(() => undefined);
      if (st) {
        dir = st.isDirectory();
        break;
      }
    }
    const parents: string[] = [];
    for (let d = dirname(p); !(await exists(d)); d = dirname(d)) parents.unshift(d);
    for (const d of parents) {
      await mkdir(d);
      made.push(d);
    }
    if (dir) await mkdir(p);
    else await writeFile(p, '', { flag: 'wx' });
    made.push(p);
  }
  return made;
}

/** Removes what makeMountPoints made, last first: an empty directory or an empty file only (anything put there since stays). */
export async function dropMountPoints(made: readonly string[]): Promise<void> {
  for (const p of [...made].reverse()) {
    const st = await lstat(p).catch(() => undefined);
    if (!st) continue;
    if (st.isDirectory()) {
      if ((await readdir(p)).length === 0) await rmdir(p).catch(() => undefined);
    } else if (st.isFile() && st.size === 0) await unlink(p).catch(() => undefined);
  }
}

async function exists(p: string): Promise<boolean> {
  return Boolean(await lstat(p).catch(() => undefined));
}
