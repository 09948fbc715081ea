import { promised } from '@opsctl/shared/promised.js';
import { transact } from './tx.js';

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

/** How a file store waits for its lock (see core/lock.ts, from @opsctl/shared/lock). */
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

  /** A transaction on the live state (tx.ts): no copy of it, the function's changes undone if it throws. */
  write<T>(fn: (state: MockState) => T): Promise<T> {
    const run = () => transact(this.state, fn).result;
    const p = this.queue.then(run, run);
    this.queue = p.catch(() => undefined);
    return p;
  }

  async close(): Promise<void> {}
}
