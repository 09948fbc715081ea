import { access, constants } from 'node:fs/promises';
import { dirError, ensurePrivateDir } from './paths.js';

/**
 * Makes (if needed) one of opsctl's directories and checks that files can be created in it: a read-only
 * or foreign directory is the error naming it and the fix (OPSCTL_CONFIG_DIR, permissions), found
 * before a command does anything it would then fail to record.
 */
export async function writableDir(dir: string): Promise<void> {
  await ensurePrivateDir(dir);
  await access(dir, constants.W_OK | constants.X_OK).catch((err) => {
    throw dirError(dir, err);
  });
}
