import { lstat, readdir, statfs } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { formatSize } from '@opsctl/shared/size.js';
import { backupEstimate } from './backup-copy.js';

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
  // a live member renames files as it writes (a temp file, a WAL segment cut): one gone since the listing counts 0
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    n += e.isDirectory()
      ? await treeBytes(p)
      : await lstat(p).then(
          (s) => s.size,
          (err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? 0 : Promise.reject(err)),
        );
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

/** Whether a backup of `dataDir` (and the member's own WAL dir, which the copy holds too) to `dest` fits, with the margin (the copy's own estimate: backup-copy.ts). */
export async function backupSpace(dataDir: string, dest: string, walDir?: string): Promise<BackupSpace> {
  const [dataBytes, replaced, free] = await Promise.all([Promise.resolve().then(() => backupEstimate(dataDir, walDir)), treeBytes(dest), freeAt(dest)]);
  const needed = backupNeeds(dataBytes);
  return { dest, dataDir, dataBytes, needed, free: free + replaced, ok: free + replaced >= needed };
}

/** The sentence a refusal or a failed copy says: the path, what is needed and what is free. */
export function describeSpace(s: BackupSpace): string {
  return `${s.dest} needs ${formatSize(s.needed)} free (a backup of ${s.dataDir} takes ${formatSize(s.dataBytes)}, plus ${BACKUP_MARGIN_RATIO * 100}% and ${formatSize(BACKUP_MARGIN_BYTES)} margin), ${formatSize(s.free)} is free`;
}

/** A space report from a member's host that cannot be read: names what was expected. */
export class SpaceReportError extends Error {}

/** `du -sk PATH` (GNU, busybox, BSD): "KIB<tab>PATH". The bytes and the path. */
export function parseDu(line: string): { bytes: number; path: string } {
  const m = /^\s*(\d+)\s+(.+?)\s*$/.exec(line);
  if (!m) throw new SpaceReportError(`not a \`du -sk\` line ("KiB<tab>path"): ${JSON.stringify(line.slice(0, 120))}`);
  return { bytes: Number(m[1]) * 1024, path: m[2]! };
}

/**
 * `df -Pk PATH` (POSIX: one line per filesystem, never wrapped; GNU "1024-blocks", busybox alike):
 * the header, then "FS BLOCKS USED AVAILABLE CAPACITY MOUNT" (the mount point may hold blanks).
 * The free bytes an unprivileged writer has (Available × block size) and the mount point.
 */
export function parseDf(text: string): { free: number; mount: string } {
  const lines = text.split('\n').filter((l) => l.trim());
  const h = lines.findIndex((l) => /^Filesystem\s/.test(l));
  if (h < 0) throw new SpaceReportError('no `df -Pk` header ("Filesystem 1024-blocks Used Available Capacity Mounted on")');
  const unit = /\s(\d+)([KMG]?)-blocks\s/i.exec(lines[h]!);
  if (!unit) throw new SpaceReportError(`the df header names no block size ("1024-blocks"): ${JSON.stringify(lines[h]!.slice(0, 120))}`);
  const block = Number(unit[1]) * ({ '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 } as Record<string, number>)[unit[2]!.toLowerCase()]!;
  const row = lines[h + 1];
  const m = row === undefined ? null : /^(.*?)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+%|-)\s+(\/.*?)\s*$/.exec(row);
  if (!m) throw new SpaceReportError(`no \`df -Pk\` row after the header: ${JSON.stringify((row ?? '(none)').slice(0, 120))}`);
  return { free: Number(m[4]) * block, mount: m[6]! };
}

/**
 * A space template's output: `du -sk DATA_DIR` then `df -Pk BACKUP_DIR` (e.g. `ssh {host} sudo du -sk
 * /var/lib/etcd && df -Pk /var/lib`). What it measured, or a SpaceReportError naming what is missing.
 */
export function parseSpaceReport(text: string): { dataDir: string; dataBytes: number; free: number; mount: string } {
  const lines = text.split('\n');
  const h = lines.findIndex((l) => /^Filesystem\s/.test(l));
  const before = (h < 0 ? lines : lines.slice(0, h)).filter((l) => l.trim());
  const du = before[before.length - 1];
  if (du === undefined) throw new SpaceReportError('no `du -sk` line before the df output (the template prints `du -sk DATA_DIR` then `df -Pk BACKUP_DIR`)');
  const d = parseDu(du);
  const f = parseDf(h < 0 ? '' : lines.slice(h).join('\n'));
  return { dataDir: d.path, dataBytes: d.bytes, free: f.free, mount: f.mount };
}
