import * as fs from 'node:fs';
import { readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { OpsError } from '../core/errors.js';

export interface FileLockOptions {
  /** How old a lock whose holder cannot be checked (another host, a reused pid) may get before it is taken over. */
  staleMs?: number;
  /** Give up after this long, naming the holder. */
  waitMs?: number;
  /** What the file is, for the message when it stays locked ("the mock state file"). */
  what: string;
}

/**
 * A cross-process lock on `path` (proper-lockfile: a `PATH.lock` directory whose mtime a live holder
 * keeps fresh). The holder also records its pid and host inside it, so a holder that died (SIGKILL,
 * a crash) is recognised at once: its pid is gone on this host, and the next process takes the lock
 * over instead of waiting for it to go stale. Returns the release function.
 */
export async function lockFile(path: string, opts: FileLockOptions): Promise<() => Promise<void>> {
  const { default: lockfile } = await import('proper-lockfile');
  const lockDir = `${path}.lock`;
  const ownerFile = join(lockDir, 'owner');
  const staleMs = opts.staleMs ?? 60_000;
  const waitMs = opts.waitMs ?? 60_000;
  let compromised: Error | undefined;
  const options = {
    realpath: false,
    stale: staleMs,
    update: Math.max(1_000, Math.floor(staleMs / 5)),
    retries: 0,
    // The lock directory holds the owner file: remove it with its content (release and stale takeover).
    // The owner file and the directory are removed directly; anything else in it falls back to a recursive rm.
    fs: { ...fs, rmdir: removeLockDir },
    onCompromised: (err: Error) => {
      compromised = err;
    },
  };
  const deadline = Date.now() + waitMs;
  let delay = 5;
  for (;;) {
    try {
      const release = await lockfile.lock(path, options);
      await writeFile(ownerFile, JSON.stringify({ pid: process.pid, host: hostname() })).catch(() => undefined);
      return async () => {
        if (compromised) throw new OpsError(`lost the lock on ${opts.what} ${path} while holding it: ${compromised.message}`, 1, { code: 'lock_lost', hint: 'run the command again' });
        await release();
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
    }
    const owner = await readFile(ownerFile, 'utf8').catch(() => undefined);
    if (owner !== undefined && holderIsDead(owner)) {
      // Take over a dead holder's lock, unless someone else did in the meantime.
      if ((await readFile(ownerFile, 'utf8').catch(() => undefined)) === owner) await rm(lockDir, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) {
      const recorded = owner ? safeJson(owner)?.pid : undefined;
      const pid = typeof recorded === 'number' || typeof recorded === 'string' ? recorded : '?';
      throw new OpsError(`${opts.what} ${path} is locked by another opsctl process (pid ${pid}) that is still running`, 1, {
        code: 'locked',
        hint: `wait for it to finish, or stop it; if no such process exists, remove ${lockDir}`,
      });
    }
    await new Promise((r) => setTimeout(r, delay + Math.random() * delay));
    delay = Math.min(100, delay * 1.5);
  }
}

/** Removes a lock directory: its owner file, then the directory (a recursive rm if something else is in it). */
function removeLockDir(dir: string, cb: (err: NodeJS.ErrnoException | null) => void): void {
  fs.unlink(join(dir, 'owner'), () => {
    fs.rmdir(dir, (err) => {
      if (err?.code === 'ENOTEMPTY' || err?.code === 'EEXIST') fs.rm(dir, { recursive: true, force: true }, cb);
      else cb(err?.code === 'ENOENT' ? null : err);
    });
  });
}

function safeJson(s: string): { pid?: unknown; host?: unknown } | undefined {
  try {
    const v = JSON.parse(s) as unknown;
    return v && typeof v === 'object' ? (v) : undefined;
  } catch {
    return undefined;
  }
}

/** True when the recorded holder ran on this host and its process no longer exists. */
function holderIsDead(owner: string): boolean {
  const o = safeJson(owner);
  if (!o || typeof o.pid !== 'number' || o.host !== hostname() || o.pid === process.pid) return false;
  try {
    process.kill(o.pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Removes the temporary files write-file-atomic leaves next to `path` (`PATH.<number>`) when its writer
 * was killed between writing and renaming. Call it while holding the lock: no live writer has one then.
 */
export async function removeLeftoverTempFiles(path: string): Promise<void> {
  const base = basename(path);
  const re = new RegExp(`^${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.\\d+$`);
  const names = await readdir(dirname(path)).catch(() => [] as string[]);
  await Promise.all(names.filter((n) => re.test(n)).map((n) => unlink(join(dirname(path), n)).catch(() => undefined)));
}
