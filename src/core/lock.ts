import * as fs from 'node:fs';
import { open, readdir, readFile, rmdir, unlink, utimes } from 'node:fs/promises';
import { createHash, randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { InterruptedError, OpsError } from './errors.js';
import { checkOwnDirSync } from './local-file.js';

export interface FileLockOptions {
  /** How long an entry of a process on another host (one whose pid cannot be checked here) may go without its heartbeat before it is removed. */
  staleMs?: number;
  /** Give up after this long, naming the holder. */
  waitMs?: number;
  /** What the file is, for the message when it stays locked ("the mock state file"). */
  what: string;
  /** Ends the wait (Ctrl-C, SIGTERM): the wait throws an InterruptedError. */
  signal?: AbortSignal;
  /** Told when a lock left by a dead holder is taken over, or a wait goes on (default: a line on stderr). */
  notice?: (text: string) => void;
}

/** An unreadable owner file of the lock of opsctl before the bakery is taken as garbage once it is this old. */
const LEGACY_GRACE_MS = 2_000;

/** After this long waiting for a live holder, the waiter says what it waits for (once). */
export const LOCK_WAIT_NOTICE_MS = 1_000;

/**
 * The one cross-process lock on opsctl's local files (config, credentials, the mock state, tracker pacing):
 * a directory `PATH.lock` in which each process that wants the lock files a ticket, Lamport's bakery in the
 * file system:
 *
 * 1. create `c.ID` (choosing), read the directory, create `t.N.ID` with N one more than every ticket
 *    there, remove `c.ID`;
 * 2. wait until no other live process is choosing and no live ticket is lower than (N, ID); then hold it;
 * 3. release: remove `t.N.ID` (and the directory when it is empty).
 *
 * Every name is unique to one attempt of one process and is never created again, so removing the entry of
 * a dead process can never remove anyone else's: the take-over of a killed holder's lock cannot race (the
 * old design's `rm -rf PATH.lock` could remove a lock another waiter had just re-created). Waiters are
 * served in ticket order, so none starves. A process is judged dead by its pid and its start time
 * (Linux: /proc/PID/stat; a reused pid is another process), both part of the entry's name, so a killed
 * holder's lock is taken over at once, with a notice. An entry of a process on another host (a home on
 * NFS) cannot be judged so: its holder touches it every `staleMs / 4` (a heartbeat) and it counts as gone
 * when it is older than `staleMs`.
 *
 * Returns the release function.
 */
export async function lockFile(path: string, opts: FileLockOptions): Promise<() => Promise<void>> {
  const lock = new BakeryLock(path, opts);
  return lock.acquire();
}

interface Entry {
  name: string;
  kind: 'choosing' | 'ticket' | 'legacy';
  num: number;
  id: string;
}

class BakeryLock {
  private readonly dir: string;
  private readonly id = `${HOST_TAG}-${process.pid}-${OWN_START}-${randomBytes(4).toString('hex')}`;
  private ticket?: string;
  private heartbeat?: NodeJS.Timeout;
  private readonly staleMs: number;
  private readonly notice: (text: string) => void;

  constructor(
    private readonly path: string,
    private readonly opts: FileLockOptions,
  ) {
    this.dir = `${path}.lock`;
    this.staleMs = opts.staleMs ?? 60_000;
    this.notice = opts.notice ?? defaultNotice;
  }

  async acquire(): Promise<() => Promise<void>> {
    const { what } = this.opts;
    this.checkAborted();
    await this.takeTicket();
    try {
      await this.waitForTurn();
    } catch (err) {
      await this.drop();
      throw err;
    }
    return async () => {
      const lost = await this.drop();
      if (lost)
        throw new OpsError(`lost the lock on ${what} ${this.path} while holding it: its entry ${lost} was removed by another process`, 1, {
          code: 'lock_lost',
          hint: 'run the command again',
        });
    };
  }

  private checkAborted(): void {
    if (this.opts.signal?.aborted) throw new InterruptedError(`interrupted while waiting for the lock on ${this.opts.what} ${this.path}; nothing was changed`);
  }

  /** Step 1: a ticket one above every ticket present, taken while a `c.ID` entry says "choosing". */
  private async takeTicket(): Promise<void> {
    const choosing = join(this.dir, `c.${this.id}`);
    for (let attempt = 0; ; attempt++) {
      this.makeDir();
      try {
        await createExclusive(choosing, '');
        break;
      } catch (err) {
        // The directory was removed (an empty lock is tidied away on release) between making it and now.
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt > 100) throw err;
      }
    }
    const entries = await this.entries();
    const num = 1 + Math.max(0, ...entries.filter((e) => e.kind === 'ticket').map((e) => e.num));
    const ticket = `t.${num}.${this.id}`;
    await createExclusive(join(this.dir, ticket), `${JSON.stringify({ pid: process.pid, host: hostname(), start: OWN_START, what: this.opts.what })}\n`);
    this.ticket = ticket;
    // The ticket exists before "choosing" ends: a process that waited for this one to choose then sees its number.
    await unlink(choosing);
    const beat = Math.max(1_000, Math.floor(this.staleMs / 4));
    this.heartbeat = setInterval(() => {
      const now = new Date();
      if (this.ticket) void utimes(join(this.dir, this.ticket), now, now).catch(() => undefined);
    }, beat);
    this.heartbeat.unref();
  }

  /** Step 2: wait until no live process chooses and no live ticket is ahead of this one. */
  private async waitForTurn(): Promise<void> {
    const { what } = this.opts;
    const mine = parseEntry(this.ticket!)!;
    const waitMs = this.opts.waitMs ?? 60_000;
    const started = Date.now();
    let delay = 2;
    let told = false;
    for (;;) {
      this.checkAborted();
      const blocker = await this.firstLiveBlocker(mine);
      if (!blocker) return;
      const pid = blocker.id.split('-')[1] || '?';
      if (!told && Date.now() - started >= LOCK_WAIT_NOTICE_MS) {
        told = true;
        this.notice(`waiting for the lock on ${what} ${this.path}, held by opsctl pid ${pid} (giving up after ${Math.round(waitMs / 1000)} s; Ctrl-C stops)`);
      }
      if (Date.now() - started > waitMs) {
        throw new OpsError(`${what} ${this.path} is locked by another opsctl process (pid ${pid}) that is still running`, 1, {
          code: 'locked',
          hint: `wait for it to finish, or stop it; if no such process exists, remove ${this.dir}`,
        });
      }
      await waitOrAbort(delay + Math.random() * delay, this.opts.signal);
      delay = Math.min(50, delay * 1.5);
    }
  }

  /** The first entry that must finish before this ticket's turn; dead ones met on the way are removed. */
  private async firstLiveBlocker(mine: Entry): Promise<Entry | undefined> {
    const entries = await this.entries();
    const ahead = entries
      .filter((e) => e.name !== mine.name && (e.kind !== 'ticket' || before(e, mine)))
      // choosing first (they may yet take a lower number), then tickets in their order
      .sort((a, b) => rank(a) - rank(b) || a.num - b.num || (a.id < b.id ? -1 : 1));
    for (const e of ahead) {
      const gone = await this.goneReason(e);
      if (!gone) return e;
      try {
        await unlink(join(this.dir, e.name));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue; // removed by another waiter (who says so)
        throw err;
      }
      if (e.kind !== 'choosing') this.notice(`took over the lock on ${this.opts.what} ${this.path}: ${gone}`);
    }
    return undefined;
  }

  /** Why the process of an entry is gone (its entry may be removed), or undefined while it may live. */
  private async goneReason(e: Entry): Promise<string | undefined> {
    let host: string | undefined;
    let pid: number | undefined;
    let start: string | undefined;
    if (e.kind === 'legacy') {
      // An owner file of the lock of opsctl before the bakery (proper-lockfile's `PATH.lock/owner`).
      const o = safeJson(await readFile(join(this.dir, e.name), 'utf8').catch(() => ''));
      if (!o || typeof o.pid !== 'number') {
        // Its writer wrote it at once and then left it alone: unreadable and a few seconds old, it is garbage.
        const age = entryAge(join(this.dir, e.name));
        return age !== undefined && age > LEGACY_GRACE_MS ? 'its owner file is unreadable' : undefined;
      }
      host = o.host === hostname() ? HOST_TAG : 'other';
      pid = o.pid;
      start = typeof o.start === 'string' ? o.start : '-';
      e.id = `${host}-${pid}-${start}`;
    } else {
      const parts = e.id.split('-');
      host = parts[0];
      pid = Number(parts[1]);
      start = parts[2];
    }
    if (host !== HOST_TAG || !Number.isInteger(pid) || pid <= 0) {
      const age = entryAge(join(this.dir, e.name));
      if (age === undefined) return undefined; // gone already: the next look skips it
      return age > this.staleMs ? `its holder on another host has not renewed it for ${Math.round(age / 1000)} s` : undefined;
    }
    if (pid === process.pid) return undefined; // another attempt of this process: it finishes by itself
    try {
      process.kill(pid, 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ESRCH') return `its holder (opsctl pid ${pid}) is gone`;
      return undefined;
    }
    const now = processStart(pid);
    if (start && start !== '-' && now !== undefined && now !== start) return `its holder (pid ${pid}) is gone and the pid now belongs to another process`;
    return undefined;
  }

  private async entries(): Promise<Entry[]> {
    const names = await readdir(this.dir);
    return names.map(parseEntry).filter((e): e is Entry => e !== undefined);
  }

  /** Makes the lock directory (0700); one that is not this user's, or that others can write, is refused. */
  private makeDir(): void {
    try {
      fs.mkdirSync(this.dir, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      checkOwnDirSync(this.dir, `the lock directory of ${this.opts.what}`);
    }
  }

  /** Step 3: removes this process's ticket (and the lock directory when it is left empty); the ticket's name when it was already gone. */
  private async drop(): Promise<string | undefined> {
    if (this.heartbeat) clearInterval(this.heartbeat);
    const ticket = this.ticket;
    this.ticket = undefined;
    if (!ticket) return undefined;
    let lost: string | undefined;
    await unlink(join(this.dir, ticket)).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') lost = ticket;
      else throw err;
    });
    // Fails (ENOTEMPTY) while anyone else has an entry in it: nothing of theirs can be lost.
    await rmdir(this.dir).catch(() => undefined);
    return lost;
  }
}

/** `c.ID`, `t.N.ID`, or the legacy `owner`; anything else in the directory is ignored. */
function parseEntry(name: string): Entry | undefined {
  if (name === 'owner') return { name, kind: 'legacy', num: 0, id: '' };
  const choosing = /^c\.([0-9a-f]+-\d+-[\d-]+-[0-9a-f]+)$/.exec(name);
  if (choosing) return { name, kind: 'choosing', num: 0, id: choosing[1]! };
  const ticket = /^t\.(\d+)\.([0-9a-f]+-\d+-[\d-]+-[0-9a-f]+)$/.exec(name);
  if (ticket) return { name, kind: 'ticket', num: Number(ticket[1]), id: ticket[2]! };
  return undefined;
}

const rank = (e: Entry) => (e.kind === 'choosing' ? 0 : e.kind === 'legacy' ? 1 : 2);
const before = (a: Entry, b: Entry) => a.num < b.num || (a.num === b.num && a.id < b.id);

async function createExclusive(file: string, content: string): Promise<void> {
  const handle = await open(file, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY | (fs.constants.O_NOFOLLOW ?? 0), 0o600);
  try {
    if (content) await handle.writeFile(content);
  } finally {
    await handle.close();
  }
}

function safeJson(s: string): { pid?: unknown; host?: unknown; start?: unknown } | undefined {
  try {
    const v = JSON.parse(s) as unknown;
    return v && typeof v === 'object' ? v : undefined;
  } catch {
    return undefined;
  }
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

/** This host, as 8 hex digits of its name's hash (an entry's name holds it: hostnames may hold any character). */
const HOST_TAG = createHash('sha256').update(hostname()).digest('hex').slice(0, 8);
/** This process's start time, `-` where it cannot be read. */
const OWN_START = processStart(process.pid) ?? '-';

/** Milliseconds since an entry was last touched (undefined when it is gone). */
function entryAge(file: string): number | undefined {
  try {
    return Date.now() - fs.statSync(file).mtimeMs;
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
