import {
  closeSync,
  existsSync,
  constants,
  copyFileSync,
  fchmodSync,
  fchownSync,
  ftruncateSync,
  futimesSync,
  lchownSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { dirname, join } from 'node:path';
import type { MemberDirs } from '../wal/v2-data.js';

/**
 * A stopped member's data dir copied in proportion to what it holds, not to the space etcd reserved:
 * - the WAL's `*.tmp` file (the next segment, preallocated before it is needed; etcd lists only `*.wal`
 *   files when it opens the WAL, and makes a new `.tmp` when it needs one) is left out;
 * - every file is a reflink where the filesystem has them (btrfs, XFS: shared blocks, copied on write),
 *   else a sparse copy: runs of zero blocks become holes. A WAL segment is 64 MB preallocated from its
 *   first record (fallocate), so a copy of the newest one costs what was written to it, not 64 MB.
 * No hard links: a link shares the live member's inode, and etcd rewrites its files in place once the
 * member runs again (the db by bbolt; a `.snap` is written with O_TRUNC; a received `.snap.db` is renamed
 * to `db`), which would change the way back under its name.
 */

/** What a copy holds and costs. */
export interface CopyFigures {
  files: number;
  /** Files left out (the WAL's preallocated `.tmp`). */
  skipped: number;
  /** Apparent bytes copied (`du -sb`). */
  bytes: number;
  /** Bytes the copy takes on disk (allocated blocks, `du -sB1`). */
  onDisk: number;
}

const BLOCK = 4096;
const CHUNK = 1 << 20;
const ZERO = Buffer.alloc(BLOCK);

/** Whether `path` (relative to the data dir) is a file a backup leaves out. */
export function leftOut(rel: string): boolean {
  return /(^|\/)member\/wal\/[^/]+\.tmp$/.test(rel);
}

/** `src` copied to `dest` (replaced); `skip` leaves out what a backup does not need. */
export function copyTree(src: string, dest: string, skip: (rel: string) => boolean = leftOut): CopyFigures {
  rmSync(dest, { recursive: true, force: true });
  mkdirSync(dirname(dest), { recursive: true });
  const fig: CopyFigures = { files: 0, skipped: 0, bytes: 0, onDisk: 0 };
  const reflink = { works: true };
  walk(src, dest, '', skip, fig, reflink);
  return fig;
}

/**
 * A member's data copied to `dest` as one data dir that holds all a restore needs: its data dir, and where it
 * keeps its WAL elsewhere (wal-dir), that WAL as the copy's member/wal (its preallocated `.tmp` left out).
 */
export function copyMemberData(dirs: MemberDirs, dest: string): CopyFigures {
  if (!dirs.walDir) return copyTree(dirs.dataDir, dest);
  // (a member/wal left in the data dir is not the member's WAL then: etcd reads only its wal-dir)
  const fig = copyTree(dirs.dataDir, dest, (rel) => leftOut(rel) || rel.startsWith('member/wal/'));
  rmSync(join(dest, 'member', 'wal'), { recursive: true, force: true });
  const wal = copyTree(dirs.walDir, join(dest, 'member', 'wal'), (rel) => !rel.includes('/') && rel.endsWith('.tmp'));
  return { files: fig.files + wal.files, skipped: fig.skipped + wal.skipped, bytes: fig.bytes + wal.bytes, onDisk: fig.onDisk + wal.onDisk };
}

/**
 * A member's data put back from a copy made by copyMemberData: the data dir, and where the member keeps its
 * WAL elsewhere, the copy's member/wal into that WAL dir (both replaced).
 */
export function restoreMemberData(copy: string, dirs: MemberDirs): void {
  if (!dirs.walDir) {
    copyTree(copy, dirs.dataDir, () => false);
    return;
  }
  copyTree(copy, dirs.dataDir, (rel) => rel.startsWith('member/wal/'));
  rmSync(join(dirs.dataDir, 'member', 'wal'), { recursive: true, force: true });
  copyTree(join(copy, 'member', 'wal'), dirs.walDir, () => false);
}

/**
 * --on-failure rollback's put-back of a member's data from its copy (`copy`, made by copyMemberData): the data
 * dir the target ran on kept as DIR.failed-RUN, and with it (as its member/wal) the member's own WAL dir; then
 * the copy's parts back in their places. A copy an older opsctl made holds no member/wal for a member's own
 * WAL dir: its WAL dir is left as it is then. Returns the journal's detail.
 */
export function putBackMemberData(copy: string, member: MemberDirs, run: string): string {
  const dirs = member.walDir && existsSync(join(copy, 'member', 'wal')) ? member : { dataDir: member.dataDir };
  const dir = dirs.dataDir;
  const failed = `${dir}.failed-${run}`;
  rmSync(failed, { recursive: true, force: true });
  if (existsSync(dir)) renameSync(dir, failed);
  let walKept = '';
  if (dirs.walDir && existsSync(dirs.walDir)) {
    const to = existsSync(join(failed, 'member', 'wal')) ? `${dirs.walDir}.failed-${run}` : join(failed, 'member', 'wal');
    rmSync(`${dirs.walDir}.failed-${run}`, { recursive: true, force: true });
    moveTree(dirs.walDir, to);
    walKept = `, its WAL dir ${dirs.walDir} kept as ${to}`;
  }
  restoreMemberData(copy, dirs);
  return `data dir restored from ${copy}${dirs.walDir ? ` (its member/wal into ${dirs.walDir})` : ''}, the failed one kept as ${failed}${walKept}`;
}

/** `from` renamed to `to` (its parent made), or copied and removed where they are on two filesystems (a WAL dir on a disk of its own). */
export function moveTree(from: string, to: string): void {
  mkdirSync(dirname(to), { recursive: true });
  try {
    renameSync(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
    copyTree(from, to, () => false);
    rmSync(from, { recursive: true, force: true });
  }
}

function walk(src: string, dest: string, rel: string, skip: (rel: string) => boolean, fig: CopyFigures, reflink: { works: boolean }): void {
  const st = lstatSync(src);
  if (st.isDirectory()) {
    mkdirSync(dest, { mode: st.mode & 0o7777 });
    for (const name of readdirSync(src)) walk(join(src, name), join(dest, name), rel ? `${rel}/${name}` : name, skip, fig, reflink);
    keepOwner(dest, st);
    utimesSync(dest, st.atime, st.mtime);
  } else if (st.isSymbolicLink()) {
    symlinkSync(readlinkSync(src), dest);
    keepOwner(dest, st);
  } else if (st.isFile()) {
    if (skip(rel)) {
      fig.skipped++;
      return;
    }
    copyFile(src, dest, st, reflink);
    fig.files++;
    fig.bytes += st.size;
    fig.onDisk += lstatSync(dest).blocks * 512;
  }
  // (sockets, fifos, devices: a data dir holds none; a copy would not restore them either)
}

function keepOwner(path: string, st: Stats): void {
  if (process.getuid?.() !== 0) return;
  lchownSync(path, st.uid, st.gid);
}

/** A reflink when the filesystem has them (tried once per copy), else a sparse copy; mode, owner and times kept. */
function copyFile(src: string, dest: string, st: Stats, reflink: { works: boolean }): void {
  if (reflink.works) {
    try {
      copyFileSync(src, dest, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE_FORCE);
      keepOwner(dest, st);
      utimesSync(dest, st.atime, st.mtime);
      return;
    } catch {
      reflink.works = false;
      rmSync(dest, { force: true });
    }
  }
  const from = openSync(src, 'r');
  const to = openSync(dest, 'wx', st.mode & 0o7777);
  try {
    const buf = Buffer.allocUnsafe(CHUNK);
    let pos = 0;
    for (;;) {
      const n = readSync(from, buf, 0, CHUNK, pos);
      if (n <= 0) break;
      // write the runs of non-zero blocks where they are; a run of zero blocks stays a hole
      let start = -1;
      for (let off = 0; off < n; off += BLOCK) {
        const end = Math.min(off + BLOCK, n);
        const zero = end - off === BLOCK ? buf.subarray(off, end).equals(ZERO) : buf.subarray(off, end).every((b) => b === 0);
        if (!zero && start < 0) start = off;
        if (zero && start >= 0) {
          writeAll(to, buf, start, off, pos);
          start = -1;
        }
      }
      if (start >= 0) writeAll(to, buf, start, n, pos);
      pos += n;
    }
    ftruncateSync(to, pos);
    fchmodSync(to, st.mode & 0o7777);
    if (process.getuid?.() === 0) fchownSync(to, st.uid, st.gid);
    futimesSync(to, st.atime, st.mtime);
  } finally {
    closeSync(from);
    closeSync(to);
  }
}

function writeAll(fd: number, buf: Buffer, from: number, to: number, filePos: number): void {
  let off = from;
  while (off < to) off += writeSync(fd, buf, off, to - off, filePos + off);
}

/**
 * The bytes a backup of `dataDir` will take, before it is made: every file but those left out, each
 * at what it has allocated (a hole costs nothing), except the newest WAL segment, whose written part
 * cannot be told without reading it: at most one segment (64 MB), which the space margin (64 MiB) covers.
 */
export function backupEstimate(dataDir: string, walDir?: string): number {
  let n = 0;
  const wals: Array<{ path: string; bytes: number }> = [];
  const visit = (p: string, rel: string) => {
    let st: Stats;
    try {
      st = lstatSync(p);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    if (st.isDirectory()) {
      let names: string[];
      try {
        names = readdirSync(p);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw err;
      }
      for (const name of names) visit(join(p, name), rel ? `${rel}/${name}` : name);
      return;
    }
    if (!st.isFile() || leftOut(rel)) return;
    const bytes = Math.min(st.size, st.blocks * 512);
    if (/^member\/wal\/[^/]+\.wal$/.test(rel)) wals.push({ path: p, bytes });
    else n += bytes;
  };
  visit(dataDir, '');
  // (a member's own WAL dir is copied as the copy's member/wal)
  if (walDir) visit(walDir, 'member/wal');
  // WAL names are <seq>-<index>.wal in hex, fixed width: the last by name is the newest
  wals.sort((a, b) => a.path.localeCompare(b.path));
  return n + wals.slice(0, -1).reduce((s, w) => s + w.bytes, 0);
}

/** Bytes a file or tree takes on disk (allocated blocks, as `du -sB1` counts them, directories included; links not followed). 0 when gone. */
export function onDiskBytes(path: string): number {
  let st: Stats;
  try {
    st = lstatSync(path);
  } catch {
    return 0;
  }
  let n = st.blocks * 512;
  if (st.isDirectory()) for (const e of readdirSync(path)) n += onDiskBytes(join(path, e));
  return n;
}
