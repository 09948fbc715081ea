/**
 * What the rehearsal's copy costs the cluster: every member is paused at once while its data is copied
 * (kv/rehearsal/copy.ts), so every client waits as long as the copy reads (and a lease its holder cannot renew
 * meanwhile ages on: etcd's lease clock is the wall clock). `cp` reads every byte of each file but two kinds of
 * WAL segment: the next one etcd preallocated (`N.tmp`), given its size without a read, and the one etcd appends
 * to, read up to its records' end (counted here whole: an upper bound by up to its 64 MB); measured here, 1 GiB
 * read in about 1.2 s from the page cache, several times that from a cold disk. Above the operator's limit (`--rehearsal-max-copy`, 2 GiB by
 * default) the rehearsal is not run and each member's own trials are the proof, the plan saying so.
 */
import { lstatSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { formatSize } from '@opsctl/shared/size.js';

export const DEFAULT_MAX_COPY = 2 * 1024 ** 3;

/** etcd's next WAL segment, preallocated and not begun: `N.tmp` in a directory of `*.wal` files (`names`: its directory's). */
export function preallocatedSegment(name: string, names: readonly string[]): boolean {
  return /^\d+\.tmp$/.test(name) && names.some((n) => n.endsWith('.wal'));
}

/** The bytes the copy of `paths` reads: its regular files' (symbolic links not followed), a preallocated next WAL segment's none. */
export function copyBytes(paths: readonly string[]): number {
  let n = 0;
  const walk = (p: string, siblings: readonly string[] = []): void => {
    let st;
    try {
      st = lstatSync(p);
    } catch {
      return;
    }
    if (st.isFile()) n += preallocatedSegment(basename(p), siblings) ? 0 : st.size;
    else if (st.isDirectory()) {
      const names = readdirSync(p);
      for (const f of names) walk(join(p, f), names);
    }
  };
  for (const p of paths) walk(p);
  return n;
}

/** Why the copy of `paths` (and `bytes` measured elsewhere: members on other hosts) is over `max` bytes (undefined: within it). */
export function copyTooLarge(
  paths: readonly string[],
  { max = DEFAULT_MAX_COPY, bytes = 0 }: { max?: number | undefined; bytes?: number } = {},
): string | undefined {
  const n = copyBytes(paths) + bytes;
  if (n <= max) return undefined;
  return (
    `its copy would read ${formatSize(n)} with every member paused at once, over --rehearsal-max-copy ${formatSize(max)} ` +
    '(every client waits while it reads, and a lease not renewed meanwhile may expire; a larger --rehearsal-max-copy accepts that pause)'
  );
}
