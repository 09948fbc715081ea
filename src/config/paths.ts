import { join } from 'node:path';
import envPaths from 'env-paths';
import { OpsError } from '../core/errors.js';

export interface OpsctlPaths {
  /** Where config.json and credentials.json live. */
  config: string;
  /** Where the embedded mock state, kv sandboxes and journals live. */
  data: string;
}

/** `OPSCTL_CONFIG_DIR` moves everything (tests use it); otherwise the platform's config and data dirs. */
export function resolvePaths(env: NodeJS.ProcessEnv): OpsctlPaths {
  const override = env.OPSCTL_CONFIG_DIR;
  if (override) return { config: override, data: join(override, 'data') };
  const p = envPaths('opsctl', { suffix: '' });
  return { config: p.config, data: p.data };
}

const UNWRITABLE = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'EEXIST', 'ENOSPC', 'EDQUOT']);

/**
 * Creates one of opsctl's directories (and its parents) as 0700, whatever the umask. A directory that
 * cannot be created (no permission, a read-only file system, a file in the way) is a clear error naming
 * it and the way out (`OPSCTL_CONFIG_DIR`), not an errno stack.
 */
export async function ensurePrivateDir(dir: string): Promise<void> {
  const { mkdir } = await import('node:fs/promises');
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw dirError(dir, err);
  }
}

/** The error for a directory or a file in it that opsctl cannot write (else the error itself). */
export function dirError(dir: string, err: unknown): unknown {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  if (!UNWRITABLE.has(code)) return err;
  const why = code === 'ENOTDIR' || code === 'EEXIST' ? 'a file is in the way' : code === 'EROFS' ? 'the file system is read-only' : code === 'ENOSPC' || code === 'EDQUOT' ? 'no space left' : 'permission denied';
  return new OpsError(`cannot write opsctl's directory ${dir} (${why}, ${code})`, 1, {
    code: 'config_dir',
    hint: 'set OPSCTL_CONFIG_DIR to a directory you can write (e.g. OPSCTL_CONFIG_DIR=/tmp/opsctl), or fix the permissions of that path',
    cause: err,
  });
}
