import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { InterruptedError, OpsError } from '@opsctl/shared/errors.js';
import { checkOwnFileSync, ownIds, readOwnFileSync } from '@opsctl/shared/local-file.js';
import { promised } from '@opsctl/shared/promised.js';
import { requestSignal } from './request-signal.js';

/** The mock state is small (demo data); 64 MiB is far above any real one and below trouble. */
const STATE_MAX_BYTES = 64 * 1024 * 1024;

/** The whole mock state: one slice per service, each owned by that service's module and unknown until it narrows it. */
export type MockSlices = Record<string, unknown>;

/** The state as the store hands it out: each service narrows its own slice (tracker/records.ts, oauth/tokens.ts, labels/). */
export type MockState = MockSlices;

/** One field of a service's slice of the state, unknown until the reader narrows it. */
export function sliceField(state: MockSlices, service: string, field: string): unknown {
  const slice: unknown = state[service];
  return slice !== null && typeof slice === 'object' ? (slice as Record<string, unknown>)[field] : undefined;
}

/** The embedded tracker's own token (provisioned when its service loads; '' before). */
export function stateTrackerToken(state: MockSlices): string {
  const token = sliceField(state, 'tracker', 'token');
  return typeof token === 'string' ? token : '';
}

/**
 * Where the mock keeps its records. `write` is a transaction: the function sees the latest state,
 * and its changes are kept only if it returns without throwing (all or nothing).
 */
export interface Store {
  readonly kind: 'file' | 'memory';
  readonly path?: string;
  /** Register a slice initializer (a service loaded lazily); it runs before the next read or write. */
  addInit(init: StateInit): Promise<void>;
  read<T>(fn: (state: MockState) => T): Promise<T>;
  write<T>(fn: (state: MockState) => T): Promise<T>;
  close(): Promise<void>;
}

/** How a file store waits for its lock (see config/lock.ts). */
export interface StoreLockOptions {
  /** Ends every wait for the lock (the command's Ctrl-C / SIGTERM). */
  signal?: AbortSignal;
  /** Where notices go (a wait that goes on, a takeover); default stderr. */
  notice?: (text: string) => void;
  waitMs?: number;
}

/** A function that fills in a missing slice of state (first run, or a service added since). */
export type StateInit = (state: MockState) => boolean;

export class MemoryStore implements Store {
  readonly kind = 'memory' as const;
  private state: MockState;
  private queue: Promise<unknown> = Promise.resolve();

  private readonly inits: StateInit[] = [];

  constructor(initial: MockState = {}) {
    this.state = initial;
  }

  async addInit(init: StateInit): Promise<void> {
    this.inits.push(init);
    await this.write((s) => void init(s));
  }

  read<T>(fn: (state: MockState) => T): Promise<T> {
    return promised(() => fn(this.state));
  }

  write<T>(fn: (state: MockState) => T): Promise<T> {
    const run = () => {
      const draft = structuredClone(this.state);
      const result = fn(draft);
      this.state = draft;
      return result;
    };
    const p = this.queue.then(run, run);
    this.queue = p.catch(() => undefined);
    return p;
  }

  async close(): Promise<void> {}
}

/**
 * State in a JSON file shared by every process that uses it (the embedded default runs one mock per
 * command). Writes take a cross-process lock (proper-lockfile), re-read the file, apply the change and
 * replace the file atomically (write-file-atomic: temp file, fsync, rename), so a crash leaves either
 * the old or the new file and two processes never lose each other's writes.
 */
export class FileStore implements Store {
  readonly kind = 'file' as const;
  private queue: Promise<unknown> = Promise.resolve();
  /**
   * The file's content as this store last read or wrote it; `state` is its parse, made on the first read
   * that needs it (a write parses `raw` itself: that is its private copy, no clone needed).
   */
  private cache?: { raw: string; state?: MockState };
  private swept = false;
  private dirReady = false;

  private readonly inits: StateInit[] = [];

  /**
   * @param staleMs how old a lock whose holder cannot be checked (another host) may get before it is taken
   * over; proper-lockfile refreshes a live lock well within this. A crashed holder on this host is
   * recognised by its pid at once, so this can be long: a short one let a loaded machine (a refresh
   * timer late by seconds) count a live holder's lock as lost, and its write as failed.
   */
  constructor(
    readonly path: string,
    private readonly staleMs = 60_000,
    private readonly lockOptions: StoreLockOptions = {},
  ) {}

  /** Aborted by close(): a write still waiting for the lock then is given up, never applied later. */
  private readonly closing = new AbortController();

  async addInit(init: StateInit): Promise<void> {
    this.inits.push(init);
    // What this store last read or wrote already has the slice (the common case): keep it, so the
    // next read does not parse and check the file again. Otherwise fill the slice in now.
    if (this.cache && !init(JSON.parse(this.cache.raw) as MockState)) return;
    this.cache = undefined;
    await this.read(() => undefined);
  }

  /** Runs every initializer; true when one of them changed the state. */
  private init(state: MockState): boolean {
    let changed = false;
    for (const init of this.inits) changed = init(state) || changed;
    return changed;
  }

  async read<T>(fn: (state: MockState) => T): Promise<T> {
    const raw = await this.readRaw();
    if (raw !== undefined && this.cache?.raw === raw) return fn((this.cache.state ??= JSON.parse(raw) as MockState));
    const state = raw === undefined ? undefined : await this.parse(raw);
    // No file and nothing to fill in (a check before any service is loaded): nothing to write either.
    if (state === undefined && this.inits.length === 0) return fn({});
    // First use (or a slice missing): fill it in under the lock, then answer from what was written.
    if (state === undefined || this.init(state)) return this.write((s) => fn(s));
    this.cache = { raw: raw as string, state };
    return fn(state);
  }

  /**
   * Parses and validates the file's content. A file that is not JSON or not the mock's shape is refused,
   * naming the file, the place inside it and the fix; it is never rewritten or reset (that would lose
   * whatever it holds) until the user moves it aside.
   */
  private async parse(raw: string): Promise<MockState> {
    let state: unknown;
    try {
      state = JSON.parse(raw);
    } catch (err) {
      throw new StateFileError(this.path, `not valid JSON (${(err as Error).message})`);
    }
    // Content this store wrote, or already checked, is not checked again: loading the schema library
    // costs a short command more than all its other work. Any other content (edited, restored) is.
    if (state !== null && typeof state === 'object' && !Array.isArray(state) && (await this.checkedBefore(raw))) return state as MockState;
    const { stateProblem } = await import('./state-schema.js');
    const problem = stateProblem(state);
    if (problem) throw new StateFileError(this.path, problem);
    await this.markChecked(raw);
    return state as MockState;
  }

  /** `PATH.sha256`: the digest of the last content that passed the schema or that this store wrote. */
  private get checkedPath(): string {
    return `${this.path}.sha256`;
  }

  private async checkedBefore(raw: string): Promise<boolean> {
    const known = await readFile(this.checkedPath, 'utf8').catch(() => undefined);
    return known !== undefined && known.trim() === (await digest(raw));
  }

  private async markChecked(raw: string): Promise<void> {
    const { writeFile } = await import('node:fs/promises');
    await writeFile(this.checkedPath, `${await digest(raw)}\n`, { mode: 0o600 }).catch(() => undefined);
  }

  write<T>(fn: (state: MockState) => T): Promise<T> {
    const run = () => this.locked(fn);
    const p = this.queue.then(run, run);
    this.queue = p.catch(() => undefined);
    return p;
  }

  async close(): Promise<void> {
    this.closing.abort();
    await this.queue.catch(() => undefined);
  }

  private async locked<T>(fn: (state: MockState) => T): Promise<T> {
    const { ensurePrivateDir, dirError } = await import('@opsctl/shared/private-dir.js');
    // A relative --state (mock serve) is relative to the working directory; opsctl's own directories must be absolute.
    const dir = dirname(resolve(this.path));
    // The directory is made (or checked) by this store's first write, not before every one.
    if (!this.dirReady) {
      await ensurePrivateDir(dir);
      this.dirReady = true;
    }
    // Loaded on the first write only: a read-only command never pays for them.
    const [{ lockFile, removeLeftoverTempFiles }, { default: writeFileAtomic }] = await Promise.all([
      import('@opsctl/shared/lock.js'),
      import('write-file-atomic'),
    ]);
    // The wait ends on close(), on the command's Ctrl-C / SIGTERM, or when the client that asked gave up
    // (its request signal): a write whose requester failed is never applied after the fact.
    const signal = AbortSignal.any([this.closing.signal, ...[this.lockOptions.signal, requestSignal()].filter((s): s is AbortSignal => s !== undefined)]);
    const take = () =>
      lockFile(this.path, { staleMs: this.staleMs, what: 'the mock state file', signal, notice: this.lockOptions.notice, waitMs: this.lockOptions.waitMs });
    const release = await take().catch(async (err) => {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw dirError(dir, err);
      // The directory was removed since this store made it: make it again.
      await ensurePrivateDir(dir);
      return take().catch((again) => {
        throw dirError(dir, again);
      });
    });
    try {
      if (signal.aborted)
        throw new InterruptedError(`the write to the mock state file ${this.path} was given up (its requester stopped waiting); nothing was changed`);
      // A killed writer's temp files: looked for once per process (a live one of ours never leaves any).
      if (!this.swept) {
        await removeLeftoverTempFiles(this.path);
        this.swept = true;
      }
      const raw = await this.readRaw();
      // Unchanged since this store last read or wrote it: already checked, a plain parse is the private copy.
      const known = raw !== undefined && this.cache?.raw === raw;
      const state: MockState = known ? (JSON.parse(raw) as MockState) : raw === undefined ? {} : await this.parse(raw);
      this.init(state);
      const result = fn(state);
      const next = JSON.stringify(state);
      if (next !== raw && !(raw === undefined && next === '{}')) {
        // A link or another user's file is refused, never written through (as root, write-file-atomic
        // would follow the link and give the new file the target's owner); the new file is this user's.
        checkOwnFileSync(this.path, 'the mock state file');
        await writeFileAtomic(this.path, next, { mode: 0o600, chown: ownIds() }).catch((err) => {
          throw dirError(dirname(this.path), err);
        });
        await this.markChecked(next);
      }
      this.cache = { raw: next };
      return result;
    } finally {
      await release();
    }
  }

  private async readRaw(): Promise<string | undefined> {
    try {
      // A link, another user's file, or one others can write: refused (exit 1), never followed or reset.
      return readOwnFileSync(this.path, {
        what: 'the mock state file',
        maxBytes: STATE_MAX_BYTES,
        hint: `move it aside (mv ${this.path} ${this.path}.bad); the next command starts a fresh state`,
      });
    } catch (err) {
      if (err instanceof OpsError) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return undefined;
      if (code === 'ENOTDIR') {
        const { dirError } = await import('@opsctl/shared/private-dir.js');
        throw dirError(dirname(this.path), err);
      }
      if (code === 'EISDIR') throw new StateFileError(this.path, 'is a directory, not a file');
      if (code === 'EACCES' || code === 'EPERM') throw new StateFileError(this.path, `cannot be read (${code})`, 'fix its permissions, or move it aside');
      throw err;
    }
  }
}

async function digest(raw: string): Promise<string> {
  const { createHash } = await import('node:crypto');
  return createHash('sha256').update(raw).digest('hex');
}

/** The mock's state file cannot be used as it is. Exit 1; the file is left exactly as it was. */
export class StateFileError extends OpsError {
  constructor(
    readonly path: string,
    problem: string,
    hint = `opsctl leaves it untouched. Move it aside to start with a fresh state (mv ${path} ${path}.bad), or fix it by hand`,
  ) {
    super(`the mock state file ${path} is not usable: ${problem}`, 1, { code: 'state_file', hint });
  }
}
