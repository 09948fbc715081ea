/**
 * What the rehearsal's copy costs the cluster: every member is paused at once while its data is copied
 * (kv/rehearsal/clone.ts), so every client waits as long as the copy reads (and a lease its holder cannot renew
 * meanwhile ages on: etcd's lease clock is the wall clock). `cp` reads
 * every byte of each file (a WAL's preallocated zeros too): measured here, 1 GiB read in about 1.2 s from the
 * page cache, several times that from a cold disk. Above the operator's limit (`--rehearsal-max-copy`, 2 GiB by
 * default) the rehearsal is not run and each member's own trials are the proof, the plan saying so.
 */
import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { formatSize } from '@opsctl/shared/size.js';

export const DEFAULT_MAX_COPY = 2 * 1024 ** 3;

/** The bytes of the regular files under `paths` (what `cp -a` reads; symbolic links not followed). */
export function copyBytes(paths: readonly string[]): number {
  let n = 0;
  const walk = (p: string): void => {
    let st;
    try {
      st = lstatSync(p);
    } catch {
      return;
    }
    if (st.isFile()) n += st.size;
    else if (st.isDirectory()) for (const f of readdirSync(p)) walk(join(p, f));
  };
  for (const p of paths) walk(p);
  return n;
}

/** Why the copy of `paths` is over `max` bytes (undefined: within it). */
export function copyTooLarge(paths: readonly string[], max = DEFAULT_MAX_COPY): string | undefined {
  const n = copyBytes(paths);
  if (n <= max) return undefined;
  return (
    `its copy would read ${formatSize(n)} with every member paused at once, over --rehearsal-max-copy ${formatSize(max)} ` +
    '(every client waits while it reads, and a lease not renewed meanwhile may expire; a larger --rehearsal-max-copy accepts that pause)'
  );
}
