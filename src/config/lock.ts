import * as fs from 'node:fs';
import { readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { InterruptedError, OpsError } from '../core/errors.js';

export interface FileLockOptions {
  /** How old a lock whose holder cannot be checked (another host, a reused pid) may get before it is taken over. */
  staleMs?: number;
  /** Give up after this long, naming the holder. */
  waitMs?: number;
  /** What the file is, for the message when it stays locked ("the mock state file"). */
  what: string;
  /** Ends the wait (Ctrl-C, SIGTERM): the wait throws an InterruptedError. */
  signal?: AbortSignal;
  /** Told when a lock left by a dead or unknown holder is taken over, or a wait goes on (default: a line on stderr). */
  notice?(text: string): void;
}

/** After this long waiting for a live holder, the waiter says what it waits for (once). */
export const LOCK_WAIT_NOTICE_MS = 1_000;

/**
 * A lock with no owner file (its holder died between making the directory and writing the file), an
 * owner file that cannot be read, or one naming a live process that is not the one that wrote it (its
 * pid was reused): judged by its age. A live opsctl holder writes its owner file at once and keeps the
 * directory's mtime fresh, so such a lock older than this is taken over, with a notice.
 */
export const ORPHAN_LOCK_GRACE_MS = 2_000;

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
  const started = Date.now();
  const deadline = started + waitMs;
  let delay = 5;
  let told = false;
  for (;;) {
    if (opts.signal?.aborted) throw new InterruptedError(`interrupted while waiting for the lock on ${opts.what} ${path}; nothing was changed`);
    try {
      const release = await lockfile.lock(path, options);
      // Without its owner file a live lock would look orphaned to the next process: no owner file, no lock.
      await writeFile(ownerFile, JSON.stringify({ pid: process.pid, host: hostname(), start: processStart(process.pid) })).catch(async (err) => {
        await release().catch(() => undefined);
        throw err;
      });
      return async () => {
        if (compromised)
          throw new OpsError(`lost the lock on ${opts.what} ${path} while holding it: ${compromised.message}`, 1, {
            code: 'lock_lost',
            hint: 'run the command again',
          });
        await release();
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
    }
    const owner = await readFile(ownerFile, 'utf8').catch(() => undefined);
    const holder = judgeHolder(owner);
    if (holder === 'dead') {
      // Take over a dead holder's lock, unless someone else did in the meantime.
      if ((await readFile(ownerFile, 'utf8').catch(() => undefined)) === owner) await rm(lockDir, { recursive: true, force: true });
      continue;
    }
    if (holder !== 'live') {
      const age = lockAge(lockDir);
      if (age !== undefined && age > ORPHAN_LOCK_GRACE_MS) {
        const again = await readFile(ownerFile, 'utf8').catch(() => undefined);
        if (again === owner && lockAge(lockDir) !== undefined) {
          await rm(lockDir, { recursive: true, force: true });
          (opts.notice ?? defaultNotice)(`took over the lock on ${opts.what} ${path}: ${holder}, and it is ${Math.round(age / 1000)} s old`);
        }
        continue;
      }
    }
    const recorded = owner ? safeJson(owner)?.pid : undefined;
    const pid = typeof recorded === 'number' ? String(recorded) : '?';
    // (A lock judged by its age is taken over within the grace: nothing to announce.)
    if (!told && holder === 'live' && Date.now() - started >= LOCK_WAIT_NOTICE_MS) {
      told = true;
      (opts.notice ?? defaultNotice)(
        `waiting for the lock on ${opts.what} ${path}, held by opsctl pid ${pid} (giving up after ${Math.round(waitMs / 1000)} s; Ctrl-C stops)`,
      );
    }
    if (Date.now() > deadline) {
      throw new OpsError(`${opts.what} ${path} is locked by another opsctl process (pid ${pid}) that is still running`, 1, {
        code: 'locked',
        hint: `wait for it to finish, or stop it; if no such process exists, remove ${lockDir}`,
      });
    }
    await waitOrAbort(delay + Math.random() * delay, opts.signal);
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

function safeJson(s: string): { pid?: unknown; host?: unknown; start?: unknown } | undefined {
  try {
    const v = JSON.parse(s) as unknown;
    return v && typeof v === 'object' ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `dead`: the recorded holder ran on this host and its process no longer exists (taken over at once).
 * `live`: it runs (or cannot be checked: another host), so it is waited for.
 * Otherwise why the holder is unknown: the lock is then judged by its age.
 */
function judgeHolder(owner: string | undefined): string {
  if (owner === undefined) return 'its owner file is missing (a holder killed while taking it)';
  const o = safeJson(owner);
  if (!o || typeof o.pid !== 'number') return 'its owner file is unreadable';
  if (o.host !== hostname() || o.pid === process.pid) return 'live';
  try {
    process.kill(o.pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH' ? 'dead' : 'live';
  }
  // The pid runs: is it still the process that wrote the file (same start time), or a reused pid?
  const start = processStart(o.pid);
  if (typeof o.start === 'string' && start !== undefined && start !== o.start)
    return `its holder (pid ${o.pid}) is gone and the pid now belongs to another process`;
  return 'live';
}

/** The start time of a process (Linux: field 22 of /proc/PID/stat, in clock ticks since boot); undefined elsewhere. */
function processStart(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Milliseconds since the lock directory was last touched (undefined when it is gone). */
function lockAge(lockDir: string): number | undefined {
  try {
    return Date.now() - fs.statSync(lockDir).mtimeMs;
  } catch {
    return undefined;
  }
}

function defaultNotice(text: string): void {
  process.stderr.write(`! ${text}\n`);
}

function waitOrAbort(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
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
