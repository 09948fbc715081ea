import { constants } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { InterruptedError } from './errors.js';
import { checkOwnDirSync, checkOwnFileSync, readOwnFileSync } from './local-file.js';
import type { PacerOptions, RequestPacer } from './pacer.js';
import { sleep as abortableSleep } from './sleep.js';

/** The pacing state every opsctl process of a user shares for one tracker token (a small JSON file). */
interface SharedState {
  /** Requests of the last window: `at` is when the response arrived, null while in flight. */
  slots: Array<{ id: string; started: number; at: number | null }>;
  pausedUntil: number;
}

const PACING_FILE = 'the tracker pacing file';

/** An in-flight slot older than this is taken as finished (its process died mid-request). */
const ORPHAN_MS = 120_000;
/** How often a process re-reads the file while every slot is held by requests in flight. */
const POLL_MS = 25;

/**
 * The same sliding-window log as `Pacer`, kept in a file under the data directory and changed only under
 * a lock (the one file lock, core/lock.ts), so that every opsctl process of one user — a CI job's loop or parallel steps —
 * shares one token's budget: together they stay under the server's limit. A slot is taken before a
 * request starts and stamped when its response arrives; a 429's Retry-After pauses every process.
 */
export class SharedPacer implements RequestPacer {
  readonly limit: number;
  readonly windowMs: number;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly onWait?: (ms: number) => void;
  private readonly signal?: AbortSignal;
  private readonly notice?: (text: string) => void;
  /** One lock holder per process at a time (the file lock is per process anyway). */
  private queue: Promise<unknown> = Promise.resolve();
  /** Requests of this process waiting for a slot: one locked pass serves as many as there is room for. */
  private waiters: Array<{ id: string; resolve: (release: () => void) => void; reject: (err: unknown) => void }> = [];
  private pumping = false;
  /** Completion stamps (and a pause) not written yet: the next locked pass, or a short timer, writes them. */
  private stamps = new Map<string, number>();
  private pauseUntil = 0;
  private timer?: NodeJS.Timeout;
  private seq = 0;
  private readonly me = `${process.pid}-${Math.random().toString(36).slice(2, 8)}`;

  constructor(
    readonly file: string,
    opts: PacerOptions,
  ) {
    if (!(opts.limit > 0) || !(opts.windowMs > 0)) throw new Error('pacer: limit and window must be positive');
    this.limit = opts.limit;
    this.windowMs = opts.windowMs;
    this.now = opts.now ?? Date.now;
    this.sleep = opts.sleep ?? ((ms) => abortableSleep(ms, opts.signal));
    this.onWait = opts.onWait;
    this.signal = opts.signal;
    this.notice = opts.notice;
  }

  /** Creates the directory and checks that the file can be locked and written; throws naming the file otherwise. */
  async init(): Promise<void> {
    await mkdir(dirname(this.file), { recursive: true, mode: 0o700 });
    await this.locked(() => undefined);
  }

  private read(): SharedState {
    try {
      const parsed = JSON.parse(readOwnFileSync(this.file, { what: PACING_FILE, maxBytes: 1024 * 1024 })) as Partial<SharedState>;
      return { slots: Array.isArray(parsed.slots) ? parsed.slots : [], pausedUntil: Number(parsed.pausedUntil) || 0 };
    } catch {
      // absent, or torn by a crash mid-write: start over (the server's own 429 still protects us)
      return { slots: [], pausedUntil: 0 };
    }
  }

  /** Runs `fn` on the state under the lock, after writing this process's pending stamps, and saves it. */
  private locked<T>(fn: (s: SharedState) => T): Promise<T> {
    const run = async () => {
      // The same lock as every other local file of opsctl: a killed holder's is taken over at once, with a notice.
      const { lockFile } = await import('./lock.js');
      const release = await lockFile(this.file, { what: PACING_FILE, signal: this.signal, notice: this.notice });
      try {
        // Another user's directory or file, or a link, is refused (init() then paces this process alone).
        checkOwnDirSync(dirname(this.file), 'the tracker pacing directory');
        checkOwnFileSync(this.file, PACING_FILE);
        const state = this.read();
        const stamps = this.stamps;
        this.stamps = new Map();
        for (const slot of state.slots) {
          const at = stamps.get(slot.id);
          if (at !== undefined) slot.at = at;
        }
        state.pausedUntil = Math.max(state.pausedUntil, this.pauseUntil);
        const out = fn(state);
        await writeFile(this.file, JSON.stringify(state), {
          mode: 0o600,
          flag: constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | (constants.O_NOFOLLOW ?? 0),
        });
        return out;
      } finally {
        await release().catch(() => undefined);
      }
    };
    const p = this.queue.then(run, run);
    this.queue = p.catch(() => undefined);
    return p;
  }

  acquire(): Promise<() => void> {
    if (this.signal?.aborted) return Promise.reject(new InterruptedError());
    return new Promise((resolve, reject) => {
      this.waiters.push({ id: `${this.me}-${++this.seq}`, resolve, reject });
      void this.pump();
    });
  }

  /** Serves the waiting requests: one locked pass takes every free slot for them, then sleeps until the next frees. */
  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      while (this.waiters.length > 0) {
        if (this.signal?.aborted) throw new InterruptedError();
        const verdict = await this.locked((s) => {
          const now = this.now();
          if (now < s.pausedUntil) return { wait: s.pausedUntil - now, granted: [] as string[] };
          s.slots = s.slots.filter((x) => (x.at === null ? x.started > now - ORPHAN_MS : x.at > now - this.windowMs));
          const granted = this.waiters.slice(0, Math.max(0, this.limit - s.slots.length)).map((w) => w.id);
          for (const id of granted) s.slots.push({ id, started: now, at: null });
          if (granted.length === this.waiters.length) return { wait: 0, granted };
          const done = s.slots.filter((x) => x.at !== null).map((x) => x.at as number);
          return { wait: done.length > 0 ? Math.max(1, Math.min(...done) + this.windowMs - now + 1) : POLL_MS, granted, polling: done.length === 0 };
        });
        const served = new Set(verdict.granted);
        const ready = this.waiters.filter((w) => served.has(w.id));
        this.waiters = this.waiters.filter((w) => !served.has(w.id));
        for (const w of ready) w.resolve(this.releaser(w.id));
        if (this.waiters.length === 0) break;
        if (!('polling' in verdict && verdict.polling)) this.onWait?.(verdict.wait);
        await this.sleep(verdict.wait);
      }
    } catch (err) {
      for (const w of this.waiters.splice(0)) w.reject(err);
    } finally {
      this.pumping = false;
    }
  }

  /** Stamps the slot when the response arrives; the stamp is written with the next pass (at most 20 ms later). */
  private releaser(id: string): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.stamps.set(id, this.now());
      this.schedule();
    };
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.stamps.size > 0 || this.pauseUntil > 0) void this.flush();
    }, 20);
    this.timer.unref?.();
  }

  /** A server said "retry after": no process sends before then. */
  pause(ms: number): void {
    this.pauseUntil = Math.max(this.pauseUntil, this.now() + ms);
    void this.flush();
  }

  /** Writes what is pending (completion stamps, a pause) now; the context awaits it before exiting. */
  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    await this.locked(() => undefined).catch(() => undefined);
  }
}
