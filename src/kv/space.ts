import { lstat, readdir, statfs } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/**
 * Free space for a member's data-dir backup, checked before the member is stopped (as kubeadm's
 * pre-flight checks disk space before it touches a node): the copy needs the data dir's size, plus a
 * margin for what the filesystem itself costs and for a data dir that grows a little before its stop
 * (the WAL of the last writes): 10% of the size and 64 MiB.
 */
export const BACKUP_MARGIN_RATIO = 0.1;
export const BACKUP_MARGIN_BYTES = 64 * 1024 * 1024;

/** The bytes a backup of `dataBytes` needs free on its target filesystem. */
export function backupNeeds(dataBytes: number): number {
  return dataBytes + Math.ceil(dataBytes * BACKUP_MARGIN_RATIO) + BACKUP_MARGIN_BYTES;
}

/** How free space is read: a seam, so a test can state a figure the real filesystem does not have. */
export const spaceProbe = {
  /** Bytes an unprivileged writer may still use on the filesystem holding `path` (statfs f_bavail × f_bsize). */
  async freeBytes(path: string): Promise<number> {
    const s = await statfs(path);
    return s.bavail * s.bsize;
  },
};

/** Bytes of the files under `dir` (symbolic links are not followed: a copy copies the link). 0 when it does not exist. */
export async function treeBytes(dir: string): Promise<number> {
  let st;
  try {
    st = await lstat(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
  if (!st.isDirectory()) return st.size;
  let n = 0;
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    n += e.isDirectory() ? await treeBytes(p) : (await lstat(p)).size;
  }
  return n;
}

/** The path itself, or its nearest ancestor that exists (the backup dir is made by the copy). */
async function existingAncestor(path: string): Promise<string> {
  for (let p = path; ; p = dirname(p)) {
    try {
      await lstat(p);
      return p;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(p) === p) throw err;
    }
  }
}

/** Free bytes on the filesystem that holds (or will hold) `path`. */
export async function freeAt(path: string): Promise<number> {
  return spaceProbe.freeBytes(await existingAncestor(path));
}

export interface BackupSpace {
  /** The backup's target directory. */
  dest: string;
  dataDir: string;
  dataBytes: number;
  needed: number;
  /** Free bytes on dest's filesystem, counting an earlier copy at dest that the backup replaces. */
  free: number;
  ok: boolean;
}

/** Whether a copy of `dataDir` to `dest` fits, with the margin. */
export async function backupSpace(dataDir: string, dest: string): Promise<BackupSpace> {
  const [dataBytes, replaced, free] = await Promise.all([treeBytes(dataDir), treeBytes(dest), freeAt(dest)]);
  const needed = backupNeeds(dataBytes);
  return { dest, dataDir, dataBytes, needed, free: free + replaced, ok: free + replaced >= needed };
}

/** "1.2 GiB", "64.0 MiB", "512 bytes": for the messages. */
export function fmtBytes(n: number): string {
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  if (n < 1024) return `${n} bytes`;
  let v = n;
  let u = -1;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(1)} ${units[u]}`;
}

/** The sentence a refusal or a failed copy says: the path, what is needed and what is free. */
export function describeSpace(s: BackupSpace): string {
  return `${s.dest} needs ${fmtBytes(s.needed)} free (${s.dataDir} holds ${fmtBytes(s.dataBytes)}, plus ${BACKUP_MARGIN_RATIO * 100}% and ${fmtBytes(BACKUP_MARGIN_BYTES)} margin), ${fmtBytes(s.free)} is free`;
}
