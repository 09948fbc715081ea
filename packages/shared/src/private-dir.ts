import { dirname, isAbsolute } from 'node:path';
import { OpsError } from './errors.js';

const UNWRITABLE = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'EEXIST', 'ENOSPC', 'EDQUOT', 'ENOENT']);

/**
 * Creates one of opsctl's directories (and its parents) as 0700, whatever the umask. A directory that
 * cannot be created (no permission, a read-only file system, a file in the way) is a clear error naming
 * it and the way out (`OPSCTL_CONFIG_DIR`), not an errno stack. Parents are made one at a time: a
 * recursive mkdir reports a read-only mount as ENOENT (and loops forever under /proc), hiding the cause.
 */
export async function ensurePrivateDir(dir: string): Promise<void> {
  const { mkdir, stat } = await import('node:fs/promises');
  if (!isAbsolute(dir)) {
    throw new OpsError(`opsctl's directory ${JSON.stringify(dir)} is not an absolute path (HOME or an XDG_* variable is empty or relative)`, 1, {
      code: 'config_dir',
      hint: 'set HOME to your home directory, or OPSCTL_CONFIG_DIR to a directory you can write (e.g. OPSCTL_CONFIG_DIR=/tmp/opsctl)',
    });
  }
  const isDir = async (p: string) => (await stat(p).catch(() => undefined))?.isDirectory() === true;
  if (await isDir(dir)) return;
  const missing: string[] = [];
  for (let p = dir; !(await isDir(p)) && dirname(p) !== p; p = dirname(p)) missing.unshift(p);
  for (const p of missing) {
    try {
      await mkdir(p, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST' && (await isDir(p))) continue;
      throw dirError(dir, err, p);
    }
  }
}

/**
 * The error for a directory or a file in it that opsctl cannot write (else the error itself). `at`: the
 * path that failed, when it is a parent of `dir` (e.g. ~/.config on a read-only home).
 */
export function dirError(dir: string, err: unknown, at?: string): unknown {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  if (!UNWRITABLE.has(code)) return err;
  const why =
    code === 'ENOTDIR' || code === 'EEXIST'
      ? 'a file is in the way'
      : code === 'EROFS'
        ? 'the file system is read-only'
        : code === 'ENOSPC' || code === 'EDQUOT'
          ? 'no space left'
          : code === 'ENOENT'
            ? 'it cannot be created there'
            : 'permission denied';
  const where = at && at !== dir ? ` (at ${at})` : '';
  return new OpsError(`cannot write opsctl's directory ${dir}${where} (${why}, ${code})`, 1, {
    code: 'config_dir',
    hint: 'set OPSCTL_CONFIG_DIR to a directory you can write (e.g. OPSCTL_CONFIG_DIR=/tmp/opsctl), or fix the permissions of that path',
    cause: err,
  });
}
