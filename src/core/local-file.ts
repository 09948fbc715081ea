import { closeSync, constants, fstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';
import { ExitCode, type ExitCodeValue } from './exit-codes.js';
import { OpsError } from './errors.js';
import { promised } from './promised.js';

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
  const max = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  const before = statSync(path);
  refuseIfNotRegular(path, before, opts, max);
  // O_NONBLOCK: a FIFO swapped in after the stat opens at once instead of waiting for a writer.
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | (constants.O_NOCTTY ?? 0));
  try {
    // What was opened is what is judged and read: a file replaced in between (another opsctl's atomic
    // rename of the state file) is simply the newer file, and anything not regular is refused here.
    refuseIfNotRegular(path, fstatSync(fd), opts, max);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buf = Buffer.allocUnsafe(Math.min(64 * 1024, max + 1 - total));
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      chunks.push(buf.subarray(0, n));
      total += n;
      if (total > max) throw new LocalFileError(path, `grew past ${formatBytes(max)} while being read (the most opsctl reads)`, opts);
    }
    return Buffer.concat(chunks, total);
  } finally {
    closeSync(fd);
  }
}

/** Async wrapper (the reads are of a bounded regular file: nothing here can wait on another process). */
export function readLocalFile(path: string, opts: LocalFileOptions): Promise<string> {
  return promised(() => readLocalFileSync(path, opts));
}

export function readLocalBytes(path: string, opts: LocalFileOptions): Promise<Buffer> {
  return promised(() => readLocalBytesSync(path, opts));
}

function refuseIfNotRegular(path: string, st: Stats, opts: LocalFileOptions, max: number): void {
  const kind = kindOf(st);
  if (kind) throw new LocalFileError(path, `is ${kind}, not a regular file; opsctl does not read it`, opts);
  if (st.size > max)
    throw new LocalFileError(path, `is ${formatBytes(st.size)}, over the ${formatBytes(max)} opsctl reads`, {
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

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1).replace(/\.0$/, '')} KiB`;
  return `${(n / 1024 / 1024).toFixed(1).replace(/\.0$/, '')} MiB`;
}
