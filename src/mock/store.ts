import { mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/** The whole mock state: one slice per service, each owned by that service's module. */
export type MockState = Record<string, any>;

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

  async read<T>(fn: (state: MockState) => T): Promise<T> {
    return fn(this.state);
  }

  write<T>(fn: (state: MockState) => T): Promise<T> {
    const run = async () => {
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
  private cache?: { raw: string; state: MockState };

  private readonly inits: StateInit[] = [];

  /**
   * @param staleMs how old a lock may get before it is taken over (its holder crashed); proper-lockfile
   * refreshes a live lock well within this.
   */
  constructor(
    readonly path: string,
    private readonly staleMs = 10_000,
  ) {}

  async addInit(init: StateInit): Promise<void> {
    this.inits.push(init);
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
    if (raw !== undefined && this.cache?.raw === raw) return fn(this.cache.state);
    let state: MockState | undefined;
    try {
      state = raw === undefined ? undefined : (JSON.parse(raw) as MockState);
    } catch {
      state = undefined;
    }
    // First use (or a slice missing): fill it in under the lock, then answer from what was written.
    if (state === undefined || this.init(state)) return this.write((s) => fn(s));
    this.cache = { raw: raw as string, state };
    return fn(state);
  }

  write<T>(fn: (state: MockState) => T): Promise<T> {
    const run = () => this.locked(fn);
    const p = this.queue.then(run, run);
    this.queue = p.catch(() => undefined);
    return p;
  }

  async close(): Promise<void> {
    await this.queue.catch(() => undefined);
  }

  private async locked<T>(fn: (state: MockState) => T): Promise<T> {
    await mkdir(dirname(this.path), { recursive: true });
    // Loaded on the first write only: a read-only command never pays for them.
    const [{ default: lockfile }, { default: writeFileAtomic }] = await Promise.all([import('proper-lockfile'), import('write-file-atomic')]);
    const release = await lockfile.lock(this.path, {
      realpath: false,
      stale: this.staleMs,
      update: Math.max(1_000, Math.floor(this.staleMs / 5)),
      retries: { retries: 400, factor: 1.2, minTimeout: 5, maxTimeout: 100, randomize: true },
    });
    try {
      const raw = await this.readRaw();
      let state: MockState = {};
      if (raw !== undefined) {
        try {
          state = JSON.parse(raw);
        } catch (err) {
          throw new Error(`mock state file ${this.path} is not valid JSON (${(err as Error).message}); move it away to start afresh`);
        }
      }
      this.init(state);
      const result = fn(state);
      const next = JSON.stringify(state);
      if (next !== raw) await writeFileAtomic(this.path, next, { mode: 0o600 });
      this.cache = { raw: next, state: JSON.parse(next) };
      return result;
    } finally {
      await release();
    }
  }

  private async readRaw(): Promise<string | undefined> {
    try {
      return await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }
}
