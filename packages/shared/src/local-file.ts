import { closeSync, constants, fstatSync, lstatSync, openSync, readlinkSync, readSync, statSync, type Stats } from 'node:fs';
import { ExitCode, type ExitCodeValue } from './exit-codes.js';
import { OpsError } from './errors.js';
import { promised } from './promised.js';
import { formatSize } from './size.js';

/**
 * The one way opsctl reads a local file (its config, credentials, the mock state, `-f` files, cluster
 * and journal files): only a regular file is read. A FIFO, a device, a socket or a directory where a
 * file belongs is named and refused without ever being opened for a blocking read (stat first, then
 * open with O_NONBLOCK and fstat the handle, so a file swapped in between is caught too), and a file
 * over its size cap is refused naming the file, its size and the cap (a link to /dev/zero cannot grow
 * memory without bound).
 */
export interface LocalFileOptions {
  /** What the file is, for messages: "the config file", "--file". */
  what: string;
  /** Largest size accepted, in bytes (default 16 MiB). */
  maxBytes?: number;
  /** Exit code of the refusal: 1 for opsctl's own files (default), 2 for a file named on the command line. */
  exitCode?: ExitCodeValue;
  /** What to do about it, printed under the message. */
  hint?: string;
}

export const DEFAULT_MAX_BYTES = 16 * 1024 * 1024;

/** A local file that is not a regular file, or too big: exit 1 (or 2 for a flag's file), naming it. */
export class LocalFileError extends OpsError {
  constructor(
    readonly path: string,
    problem: string,
    opts: LocalFileOptions,
  ) {
    super(`${opts.what} ${path} ${problem}`, opts.exitCode ?? ExitCode.failure, {
      code: 'local_file',
      hint: opts.hint ?? `put a regular file there, or move it aside (mv ${path} ${path}.bad); set OPSCTL_CONFIG_DIR to use another directory`,
    });
  }
}

/** Reads a local file as UTF-8 text under the rules above. Errors of the file system (ENOENT, EACCES…) are thrown as they are. */
export function readLocalFileSync(path: string, opts: LocalFileOptions): string {
  return readLocalBytesSync(path, opts).toString('utf8');
}

/** Reads a local file as bytes under the rules above. */
export function readLocalBytesSync(path: string, opts: LocalFileOptions): Buffer {
  return readBytes(path, opts, false);
}

function readBytes(path: string, opts: LocalFileOptions, own: boolean): Buffer {
  const max = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  const before = own ? lstatSync(path) : statSync(path);
  if (own && before.isSymbolicLink()) throw symlinkError(path, opts.what);
  refuseIfNotRegular(path, before, opts, max);
  // O_NONBLOCK: a FIFO swapped in after the stat opens at once instead of waiting for a writer.
  // O_NOFOLLOW (own files): a link swapped in after the lstat fails to open (ELOOP) instead of being followed.
  const fd = openOrRefuseLink(path, constants.O_RDONLY | constants.O_NONBLOCK | (constants.O_NOCTTY ?? 0) | (own ? NOFOLLOW : 0), opts.what);
  try {
    // What was opened is what is judged and read: a file replaced in between (another opsctl's atomic
    // rename of the state file) is simply the newer file, and anything not regular is refused here.
    const st = fstatSync(fd);
    refuseIfNotRegular(path, st, opts, max);
    if (own) refuseIfNotOwn(path, st, opts.what);
    // One buffer of the size fstat gave (+1 byte to notice growth), grown only for a file that grows or
    // reports no size (/proc): a large apply file is held once while read, not as chunks plus their copy.
    let buf = Buffer.allocUnsafe(Math.min(st.size, max) + 1);
    let total = 0;
    for (;;) {
      if (total === buf.length) {
        const bigger = Buffer.allocUnsafe(Math.min(buf.length * 2, max + 1));
        buf.copy(bigger, 0, 0, total);
        buf = bigger;
      }
      const n = readSync(fd, buf, total, buf.length - total, null);
      if (n === 0) break;
      total += n;
      if (total > max) throw new LocalFileError(path, `grew past ${formatSize(max)} while being read (the most opsctl reads)`, opts);
    }
    return buf.subarray(0, total);
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads one of opsctl's own files (the config, the credentials, the mock state, a kv journal) under the
 * rules above and those of ssh and gh: a symbolic link is refused (never followed: O_NOFOLLOW where the
 * platform has it), and so is a file not owned by this user (uid; root is a user too) or writable by its
 * group or others. The checks are made on the opened descriptor (fstat), so nothing can be swapped in
 * between the check and the read. Errors of the file system (ENOENT, EACCES…) are thrown as they are.
 */
export function readOwnFileSync(path: string, opts: LocalFileOptions): string {
  return readBytes(path, opts, true).toString('utf8');
}

export function readOwnFile(path: string, opts: LocalFileOptions): Promise<string> {
  return promised(() => readOwnFileSync(path, opts));
}

/**
 * Checks, before one of opsctl's own files is replaced, that what is there now is one it may replace:
 * nothing (ENOENT), or a regular file of this user that its group and others cannot write. A link is
 * refused (an atomic writer would follow it, and as root chown the new file to the link target's owner).
 * Call it under the file's lock, in a directory `checkOwnDir` accepted: then nobody else can swap it.
 */
export function checkOwnFileSync(path: string, what: string): void {
  let fd: number;
  try {
    if (lstatSync(path).isSymbolicLink()) throw symlinkError(path, what);
    fd = openOrRefuseLink(path, constants.O_RDONLY | constants.O_NONBLOCK | (constants.O_NOCTTY ?? 0) | NOFOLLOW, what);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  try {
    const st = fstatSync(fd);
    const kind = kindOf(st);
    if (kind) throw new LocalFileError(path, `is ${kind}, not a regular file; opsctl does not replace it`, { what });
    refuseIfNotOwn(path, st, what);
  } finally {
    closeSync(fd);
  }
}

/**
 * One of opsctl's directories (the config directory, a lock directory) is trusted only when it is this
 * user's and its group and others cannot write it (ssh's rule for ~/.ssh): otherwise another user could
 * put their config (their endpoints, where a token would be sent) or swap a file in it. A directory that
 * does not exist yet passes (opsctl creates it 0700). A link to a directory is judged by the directory.
 */
export function checkOwnDirSync(dir: string, what: string): void {
  let st: Stats;
  try {
    st = statSync(dir);
  } catch (err) {
    if (['ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code ?? '')) return;
    throw err;
  }
  if (!st.isDirectory()) return; // a file in the way: the write says so (dirError)
  const me = myUid();
  if (me !== undefined && st.uid !== me) {
    throw new LocalTrustError(
      `${what} ${dir} is owned by uid ${st.uid}, not by you (uid ${me}); opsctl does not use another user's directory (its settings could send your tokens elsewhere)`,
      `if it is yours: chown ${me} ${dir}; otherwise set OPSCTL_CONFIG_DIR to a directory of your own`,
    );
  }
  if (me !== undefined && (st.mode & 0o022) !== 0) {
    throw new LocalTrustError(
      `${what} ${dir} is writable by ${writers(st.mode)} (mode ${octal(st.mode)}); another user could replace the files in it`,
      `chmod go-w ${dir}`,
    );
  }
}

/** One of opsctl's own files or directories that it does not trust: exit 1, naming it and the fix; it is left untouched. */
export class LocalTrustError extends OpsError {
  constructor(message: string, hint: string) {
    super(message, ExitCode.failure, { code: 'local_trust', hint: `${hint}. opsctl leaves it untouched` });
  }
}

/** fs.constants.O_NOFOLLOW where the platform has it (not on Windows). */
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

function openOrRefuseLink(path: string, flags: number, what: string): number {
  try {
    return openSync(path, flags);
  } catch (err) {
    // ELOOP: O_NOFOLLOW met a link (one swapped in after the lstat).
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw symlinkError(path, what);
    throw err;
  }
}

function symlinkError(path: string, what: string): LocalTrustError {
  let target = '';
  try {
    target = ` (to ${readlinkSync(path)})`;
  } catch {
    // gone again: the message names the link alone
  }
  return new LocalTrustError(
    `${what} ${path} is a symbolic link${target}; opsctl does not follow links for its own files (a write would land in the link's target)`,
    `remove the link (rm ${path}) and put the file itself there, or set OPSCTL_CONFIG_DIR to another directory`,
  );
}

function refuseIfNotOwn(path: string, st: Stats, what: string): void {
  const me = myUid();
  if (me === undefined) return;
  if (st.uid !== me) {
    throw new LocalTrustError(
      `${what} ${path} is owned by uid ${st.uid}, not by you (uid ${me}); opsctl only uses its own files`,
      `if it is yours: chown ${me} ${path}; otherwise move it aside (mv ${path} ${path}.bad)`,
    );
  }
  if ((st.mode & 0o022) !== 0) {
    throw new LocalTrustError(
      `${what} ${path} is writable by ${writers(st.mode)} (mode ${octal(st.mode)}); opsctl only uses files others cannot change`,
      `chmod go-w ${path}`,
    );
  }
}

/**
 * The owner an atomic writer gives a new file: this process's own ids (write-file-atomic would otherwise
 * copy the old file's, so a root writer could hand a file to another user). Undefined on Windows.
 */
export function ownIds(): { uid: number; gid: number } | undefined {
  const uid = process.geteuid?.();
  const gid = process.getegid?.();
  return uid === undefined || gid === undefined ? undefined : { uid, gid };
}

/** The effective uid (root is a user too), or undefined where there are no uids (Windows). */
function myUid(): number | undefined {
  return process.geteuid?.();
}

const writers = (mode: number) => ((mode & 0o020) !== 0 && (mode & 0o002) !== 0 ? 'its group and others' : (mode & 0o020) !== 0 ? 'its group' : 'others');
const octal = (mode: number) => `0${(mode & 0o7777).toString(8).padStart(3, '0')}`;

/** Async wrapper (the reads are of a bounded regular file: nothing here can wait on another process). */
export function readLocalFile(path: string, opts: LocalFileOptions): Promise<string> {
  return promised(() => readLocalFileSync(path, opts));
}

function refuseIfNotRegular(path: string, st: Stats, opts: LocalFileOptions, max: number): void {
  const kind = kindOf(st);
  if (kind) throw new LocalFileError(path, `is ${kind}, not a regular file; opsctl does not read it`, opts);
  if (st.size > max)
    throw new LocalFileError(path, `is ${formatSize(st.size)}, over the ${formatSize(max)} opsctl reads`, {
      ...opts,
      hint: opts.hint ?? `check that ${path} is the right file`,
    });
}

/** What a non-regular file is, in words; undefined for a regular file. */
export function kindOf(st: Stats): string | undefined {
  if (st.isFile()) return undefined;
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}
