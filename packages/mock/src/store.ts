import { constants as fsConstants } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { InterruptedError } from '@opsctl/shared/errors.js';
import { checkOwnFileSync, ownIds, readOwnFileSync } from '@opsctl/shared/local-file.js';
import { journalHeader, journalLine, markPersisted, replayLines, splitJournal, type Persisted } from './journal.js';
import { allAborted, digest, readStateFile, fileId, journalError, setAside, StateFileError, syncDir, type FileId, type SalvageReport } from './store-files.js';
import { readOrUndefined } from './store-files.js';
import { MemoryStore, sliceField, stateTrackerToken, type MockSlices, type MockState, type StateInit, type Store, type StoreLockOptions } from './store-api.js';
import { requestSignal } from './request-signal.js';
import { transact } from './tx.js';

/** The mock state is small (demo data); 64 MiB is far above any real one and below trouble. */
const STATE_MAX_BYTES = 64 * 1024 * 1024;

export { MemoryStore, sliceField, stateTrackerToken, StateFileError };
export type { MockSlices, MockState, StateInit, Store, StoreLockOptions };

/** How a file store keeps its file: see FileStore. */
export interface FileStoreOptions {
  /**
   * Append each write to `PATH.journal` (fdatasync'ed before the write is answered) and rewrite `PATH`
   * only when the journal has grown past the snapshot's size (`mock serve`). Without it every write
   * rewrites `PATH` (the embedded mock of a one-request command: the next command reads one file).
   */
  journal?: boolean;
  /** Where warnings go (an interrupted journal line); default stderr. */
  warn?: (text: string) => void;
}

/** How long a file store keeps the lock from one batch of writes to the next while writes keep coming. */
const LOCK_HOLD_MS = 200;

/** The journal is folded into the snapshot once it is larger than this and than the snapshot. */
const JOURNAL_MIN_COMPACT_BYTES = 1024 * 1024;

interface Loaded {
  state: MockState;
  /** The snapshot's text (undefined: no file yet) and identity when loaded or written. */
  raw?: string;
  snap?: FileId;
  /** SHA-256 of the snapshot's text (the journal's base), computed when first needed. */
  base?: string;
  /**
   * The journal's identity and size when last read or appended by this store (undefined: no file).
   * `live`: it continues this snapshot (else an older one's, to be replaced); `torn`: it ends in an
   * incomplete line, cut off before the next append.
   */
  journal?: { id: FileId; bytes: number; live: boolean; torn?: boolean };
  /** Journal mode: the objects the files hold at their place, the only ones a journal line may change (journal.ts). */
  persisted?: Persisted;
}

interface Pending {
  fn: (state: MockState) => unknown;
  signal?: AbortSignal;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * State in a JSON file shared by every process that uses it (the embedded default runs one mock per
 * command). The store keeps the state in memory and knows the file's identity (inode, size, time), so a
 * read costs two lstat calls while nobody else wrote. Writes take a cross-process lock, catch up with
 * what another process wrote, run each write as a transaction on the state (tx.ts: no copy; a function
 * that throws changes nothing) and then persist, before any of them is answered:
 *  - journal mode (`mock serve`): the writes waiting together are appended to `PATH.journal` in one
 *    write and one fdatasync (group commit), so an answered write survives kill -9 or a crash of the
 *    machine; past the snapshot's size the journal is folded into a new snapshot;
 *  - otherwise: the file is replaced atomically (write-file-atomic: temp file, fsync, rename).
 */
export class FileStore implements Store {
  readonly kind = 'file' as const;
  readonly journalPath: string;
  private mem?: Loaded;
  private pending: Pending[] = [];
  private flushing?: Promise<void>;
  private swept = false;
  private dirReady = false;

  private readonly inits: StateInit[] = [];

  /**
   * @param staleMs how old a lock whose holder cannot be checked (another host) may get before it is taken
   * over; its holder's heartbeat renews a live lock well within this. A crashed holder on this host is
   * recognised by its pid at once, so this can be long: a short one let a loaded machine (a refresh
   * timer late by seconds) count a live holder's lock as lost, and its write as failed.
   */
  constructor(
    readonly path: string,
    private readonly staleMs = 60_000,
    private readonly lockOptions: StoreLockOptions = {},
    private readonly opts: FileStoreOptions = {},
  ) {
    this.journalPath = `${path}.journal`;
  }

  /** Aborted by close(): a write still waiting for the lock then is given up, never applied later. */
  private readonly closing = new AbortController();

  async addInit(init: StateInit): Promise<void> {
    this.inits.push(init);
    // What this store holds already has the slice (the common case): nothing to write. Otherwise fill it in now.
    if (this.mem && this.current()) {
      let changed = false;
      try {
        transact(this.mem.state, (s) => {
          changed = init(s);
          throw ASKED;
        });
      } catch (err) {
        if (err !== ASKED) throw err;
      }
      if (!changed) return;
      await this.write(() => undefined);
      return;
    }
    await this.read(() => undefined);
  }

  /** Runs every initializer; true when one of them changed the state. */
  private init(state: MockState): boolean {
    let changed = false;
    for (const init of this.inits) changed = init(state) || changed;
    return changed;
  }

  /** Set while a check that the files are unchanged holds: until the event loop's next turn. */
  private checked?: Loaded;

  /** True when what this store holds is what the files hold (nobody else wrote since; checked once an event-loop turn). */
  private current(fresh = false): boolean {
    const m = this.mem;
    if (!m) return false;
    if (this.checked === m && !fresh) return true;
    const same = fileId(this.path) === m.snap && fileId(this.journalPath) === m.journal?.id;
    if (same) {
      this.checked = m;
      setImmediate(() => (this.checked = undefined));
    }
    return same;
  }

  async read<T>(fn: (state: MockState) => T): Promise<T> {
    // while this store writes, the files change under it: what it holds is the newest state
    if (this.mem && (this.flushing || this.current())) return fn(this.mem.state);
    const loaded = await this.load(false);
    // No file and nothing to fill in (a check before any service is loaded): nothing to write either.
    if (loaded.raw === undefined && this.inits.length === 0) return fn({});
    // First use (or a slice missing): fill it in under the lock, then answer from what was written.
    if (loaded.raw === undefined || this.init(loaded.state)) return this.write((s) => fn(s));
    // a write that started meanwhile owns what this store holds
    if (!this.flushing) this.mem = loaded;
    return fn(loaded.state);
  }

  /**
   * The state as the files hold it: the snapshot, checked, and the journal that continues it. `locked`:
   * this store holds the lock, so an incomplete last line is an interrupted write: warned about and cut off.
   */
  private async load(locked: boolean, salvage?: SalvageReport): Promise<Loaded> {
    const snap = fileId(this.path);
    const raw = await readStateFile(this.path, STATE_MAX_BYTES);
    if (raw === undefined) return { state: {} };
    const state = await this.parse(raw, snap);
    const loaded: Loaded = { state, raw, snap };
    await this.replayJournal(loaded, locked, salvage);
    this.markAll(loaded);
    return loaded;
  }

  /** Journal mode: everything the state holds now is what the files hold (just loaded, or just written as a snapshot). */
  private markAll(mem: Loaded): void {
    if (!this.opts.journal) return;
    mem.persisted = new WeakSet();
    markPersisted(mem.persisted, mem.state);
  }

  /**
   * Applies the journal that continues the snapshot (another snapshot's journal is ignored). A line that
   * cannot be applied refuses the state (naming what a refusal costs and the fix), or with `salvage` (under
   * the lock) is left out and listed there.
   */
  private async replayJournal(loaded: Loaded, locked: boolean, salvage?: SalvageReport): Promise<void> {
    const id = fileId(this.journalPath);
    if (id === undefined) return;
    const text = readOwnFileSync(this.journalPath, {
      what: 'the mock state journal',
      maxBytes: 4 * STATE_MAX_BYTES,
      hint: `fix its ownership or permissions: it holds the writes made since ${this.path} was last written (moving it aside would lose them)`,
    });
    let split: ReturnType<typeof splitJournal>;
    try {
      split = splitJournal(text);
    } catch (err) {
      throw journalError(this.journalPath, (err as Error).message, { lines: Math.max(0, text.split('\n').length - 2) });
    }
    loaded.base ??= await digest(loaded.raw ?? '');
    // an older snapshot's journal (a crash between writing a snapshot and starting its journal): already in the snapshot
    if (split.base !== loaded.base) {
      loaded.journal = { id, bytes: 0, live: false };
      return;
    }
    const { applied, refused } = replayLines(loaded.state, split.lines);
    if (refused.length > 0 && !salvage) {
      const first = refused[0]!;
      throw journalError(this.journalPath, `line ${first.line}: ${first.problem}`, { lines: split.lines.length, refused });
    }
    let bytes = Buffer.byteLength(text);
    if (split.torn !== undefined && locked) {
      bytes -= Buffer.byteLength(split.torn);
      (this.opts.warn ?? ((t: string) => process.stderr.write(`${t}\n`)))(
        `opsctl mock: ${this.journalPath}: its last line is incomplete (a write interrupted before it was answered): ignored and cut off`,
      );
      const { truncateSync } = await import('node:fs');
      truncateSync(this.journalPath, bytes);
    }
    if (applied > 0) {
      const { stateProblem } = await import('./state-schema.js');
      const problem = stateProblem(loaded.state);
      if (problem) throw journalError(this.journalPath, `the state it leaves is not valid: ${problem}`, { lines: split.lines.length });
    }
    if (salvage) Object.assign(salvage, { lines: split.lines.length, applied, refused, torn: split.torn !== undefined });
    loaded.journal = { id: fileId(this.journalPath) ?? id, bytes, live: true, torn: split.torn !== undefined && !locked };
  }

  /**
   * Parses and validates the file's content. A file that is not JSON or not the mock's shape is refused,
   * naming the file, the place inside it and the fix; it is never rewritten or reset (that would lose
   * whatever it holds) until the user moves it aside.
   */
  private async parse(raw: string, snap: FileId | undefined): Promise<MockState> {
    let state: unknown;
    try {
      state = JSON.parse(raw);
    } catch (err) {
      throw new StateFileError(this.path, `not valid JSON (${(err as Error).message})`);
    }
    // Content this store wrote, or already checked, is not checked again: loading the schema library
    // costs a short command more than all its other work. Any other content (edited, restored) is.
    if (state !== null && typeof state === 'object' && !Array.isArray(state) && (await this.checkedBefore(raw, snap))) return state as MockState;
    const { stateProblem } = await import('./state-schema.js');
    const problem = stateProblem(state);
    if (problem) throw new StateFileError(this.path, problem);
    await this.markChecked(raw, undefined, this.sameFile(snap));
    return state as MockState;
  }

  /** `PATH.sha256`: the digest of the last content that passed the schema or that this store wrote. */
  private get checkedPath(): string {
    return `${this.path}.sha256`;
  }

  /**
   * `PATH.sha256.id`: the identity of the file that held that content (inode, size, modification time:
   * fileId). A file of its own, so an earlier opsctl, which compares PATH.sha256 whole, still reads its marker.
   */
  private get checkedIdPath(): string {
    return `${this.path}.sha256.id`;
  }

  /** `snap` (the file's identity taken before `raw` was read) when the file still has it: `raw` is that file's content. */
  private sameFile(snap: FileId | undefined): FileId | undefined {
    return snap !== undefined && fileId(this.path) === snap ? snap : undefined;
  }

  /**
   * Whether `raw` passed the check before. The very file that was checked (the same identity before and after
   * the read) is known without hashing it: a short command then never loads node:crypto (about 5 ms of CPU).
   * Any other file (edited, restored, copied) is hashed and compared, as before the identity was kept.
   */
  private async checkedBefore(raw: string, snap: FileId | undefined): Promise<boolean> {
    const [known, id] = await Promise.all([this.checkedPath, this.checkedIdPath].map(readOrUndefined));
    if (known === undefined) return false;
    const same = this.sameFile(snap);
    if (same !== undefined && id?.trim() === same) return true;
    const hashed = await digest(raw);
    if (known.trim() !== hashed) return false;
    // the same content in another file (touched, copied back): its identity is kept for the next command
    if (same !== undefined) await this.markChecked(raw, hashed, same);
    return true;
  }

  private async markChecked(raw: string, sum?: string, id?: FileId): Promise<void> {
    const { writeFile } = await import('node:fs/promises');
    await writeFile(this.checkedPath, `${sum ?? (await digest(raw))}\n`, { mode: 0o600 }).catch(() => undefined);
    // (the identity after the digest: an identity never stands beside an older content's digest)
    await writeFile(this.checkedIdPath, `${id ?? ''}\n`, { mode: 0o600 }).catch(() => undefined);
  }

  /** Queued with the writes waiting now; they are run and persisted together (one lock, one fdatasync). */
  write<T>(fn: (state: MockState) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ fn, signal: requestSignal(), resolve: resolve as (v: unknown) => void, reject });
      this.flushing ??= this.flushAll();
    });
  }

  /**
   * Runs the waiting writes in batches. The lock is held from one batch to the next while writes keep
   * coming (up to LOCK_HOLD_MS, so another process waits at most that long), then released.
   */
  private async flushAll(): Promise<void> {
    while (this.pending.length > 0) {
      const waiting = this.pending;
      const release = await this.lock(waiting).catch((err: unknown) => {
        this.pending = this.pending.filter((p) => !waiting.includes(p));
        for (const p of waiting) p.reject(err);
        return undefined;
      });
      if (!release) continue;
      const since = Date.now();
      let released = false;
      try {
        for (;;) {
          const batch = this.pending;
          this.pending = [];
          const done = await this.flush(batch).catch((err: unknown) => batch.map((p) => () => p.reject(err)));
          // more writes came meanwhile: answer these (they are on disk) and go on under the same lock
          if (this.pending.length > 0 && Date.now() - since < LOCK_HOLD_MS) {
            for (const d of done) d();
            continue;
          }
          released = true;
          await release();
          for (const d of done) d();
          break;
        }
      } finally {
        if (!released) await release();
      }
    }
    this.flushing = undefined;
  }

  async close(): Promise<void> {
    this.closing.abort();
    await this.flushing?.catch(() => undefined);
    // A clean stop folds the journal into the snapshot: the state file alone holds the whole state again.
    if (this.opts.journal && fileId(this.journalPath) !== undefined) await this.compact();
  }

  /** Writes the snapshot from the files' state (snapshot + journal) under the lock, and drops the journal. */
  private async compact(): Promise<void> {
    const release = await this.stateLock();
    try {
      const mem = await this.load(true);
      if (mem.raw !== undefined) await this.writeSnapshot(mem);
      this.mem = mem;
    } finally {
      await release();
    }
  }

  /**
   * `mock serve --salvage-journal`: the snapshot with every journal line that still applies, written as the
   * new snapshot; the lines that cannot be applied are set aside in `PATH.journal.rejected` (each with its
   * line number and why) and the journal as it was in `PATH.journal.bad`. Nothing is dropped unsaid: the
   * report names what was kept and what was set aside. A journal that applies whole is folded in as is.
   */
  async salvageJournal(): Promise<SalvageReport> {
    const report: SalvageReport = { journal: this.journalPath, lines: 0, applied: 0, refused: [], torn: false };
    const release = await this.stateLock();
    try {
      const text =
        fileId(this.journalPath) === undefined
          ? undefined
          : readOwnFileSync(this.journalPath, { what: 'the mock state journal', maxBytes: 4 * STATE_MAX_BYTES });
      const mem = await this.load(true, report);
      if (text === undefined || mem.raw === undefined) return report;
      if (report.refused.length > 0) Object.assign(report, await setAside(this.journalPath, text, report.refused));
      await this.writeSnapshot(mem);
      this.mem = mem;
      return report;
    } finally {
      await release();
    }
  }

  /** The cross-process lock on the state file (compaction, salvage and each batch of writes take the same one). */
  private async stateLock(signal = this.lockOptions.signal): Promise<() => Promise<void>> {
    const { lockFile } = await import('@opsctl/shared/lock.js');
    return lockFile(this.path, {
      staleMs: this.staleMs,
      what: 'the mock state file',
      signal,
      notice: this.lockOptions.notice,
      waitMs: this.lockOptions.waitMs,
    });
  }

  /** Takes the cross-process lock for the writes waiting now. */
  private async lock(batch: Pending[]): Promise<() => Promise<void>> {
    const { ensurePrivateDir, dirError } = await import('@opsctl/shared/private-dir.js');
    // A relative --state (mock serve) is relative to the working directory; opsctl's own directories must be absolute.
    const dir = dirname(resolve(this.path));
    // The directory is made (or checked) by this store's first write, not before every one.
    if (!this.dirReady) {
      await ensurePrivateDir(dir);
      this.dirReady = true;
    }
    // The wait ends on close(), on the command's Ctrl-C / SIGTERM, or when every client that asked gave up
    // (their request signals): a write whose requester failed is never applied after the fact.
    const signal = AbortSignal.any([this.closing.signal, ...(this.lockOptions.signal ? [this.lockOptions.signal] : []), allAborted(batch)]);
    const take = () => this.stateLock(signal);
    return take().catch(async (err) => {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw dirError(dir, err);
      // The directory was removed since this store made it: make it again.
      await ensurePrivateDir(dir);
      return take().catch((again) => {
        throw dirError(dir, again);
      });
    });
  }

  /** Runs a batch of writes under the lock and persists them; what answers each (called once they are on disk). */
  private async flush(batch: Pending[]): Promise<Array<() => void>> {
    const { removeLeftoverTempFiles } = await import('@opsctl/shared/lock.js');
    const done: Array<() => void> = [];
    // A killed writer's temp files: looked for once per process (a live one of ours never leaves any).
    if (!this.swept) {
      await removeLeftoverTempFiles(this.path);
      this.swept = true;
    }
    // Catch up with the files (another process wrote) and fill in missing slices.
    if (!this.mem || this.mem.journal?.torn || !this.current(true)) this.mem = await this.load(true);
    const mem = this.mem;
    let snapshot = mem.raw === undefined;
    const initTx = transact(mem.state, (s) => this.init(s));
    if (initTx.result) snapshot = true;
    let lines = '';
    let changed = false;
    for (const p of batch) {
      if (p.signal?.aborted || this.closing.signal.aborted) {
        const gone = new InterruptedError(`the write to the mock state file ${this.path} was given up (its requester stopped waiting); nothing was changed`);
        done.push(() => p.reject(gone));
        continue;
      }
      try {
        const { result, touched } = transact(mem.state, p.fn);
        if (touched.size > 0) {
          changed = true;
          const line = this.opts.journal && !snapshot ? journalLine(mem.state, touched, mem.persisted) : undefined;
          if (line === undefined) snapshot = true;
          else lines += line;
        }
        done.push(() => p.resolve(result));
      } catch (err) {
        done.push(() => p.reject(err));
      }
    }
    try {
      if (!this.opts.journal) {
        if (changed || snapshot) await this.writeSnapshot(mem);
      } else if (snapshot || (mem.journal?.live && mem.journal.bytes + lines.length > Math.max(JOURNAL_MIN_COMPACT_BYTES, mem.raw?.length ?? 0))) {
        await this.writeSnapshot(mem);
      } else if (lines) await this.append(mem, lines);
    } catch (err) {
      // not on disk: what this store holds is not what the files hold; the next use reads them again
      this.mem = undefined;
      throw err;
    }
    return done;
  }

  /** Replaces the snapshot with the whole state and starts an empty journal for it (journal mode). */
  private async writeSnapshot(mem: Loaded): Promise<void> {
    const { dirError } = await import('@opsctl/shared/private-dir.js');
    const { default: writeFileAtomic } = await import('write-file-atomic');
    const next = JSON.stringify(mem.state);
    if (mem.journal || next !== mem.raw) {
      // A link or another user's file is refused, never written through (as root, write-file-atomic
      // would follow the link and give the new file the target's owner); the new file is this user's.
      checkOwnFileSync(this.path, 'the mock state file');
      await writeFileAtomic(this.path, next, { mode: 0o600, chown: ownIds() }).catch((err) => {
        throw dirError(dirname(this.path), err);
      });
      mem.base = await digest(next);
      mem.raw = next;
      mem.snap = fileId(this.path);
      await this.markChecked(next, mem.base, mem.snap);
    }
    this.markAll(mem);
    // the old journal is in the snapshot now (and names the old one as its base): gone
    if (mem.journal || fileId(this.journalPath) !== undefined) {
      const { rm } = await import('node:fs/promises');
      await rm(this.journalPath, { force: true });
      mem.journal = undefined;
    }
  }

  /** Appends lines to the journal (started, with its header, if there is none) and fdatasyncs it. */
  private async append(mem: Loaded, lines: string): Promise<void> {
    const { open } = await import('node:fs/promises');
    const fresh = !mem.journal?.live;
    mem.base ??= await digest(mem.raw ?? '');
    if (fresh) checkOwnFileSync(this.journalPath, 'the mock state journal');
    const data = fresh ? journalHeader(mem.base) + lines : lines;
    const fh = await open(this.journalPath, fsConstants.O_WRONLY | fsConstants.O_APPEND | fsConstants.O_CREAT | (fsConstants.O_NOFOLLOW ?? 0), 0o600);
    try {
      if (fresh) await fh.truncate(0);
      await fh.write(data);
      await fh.datasync();
    } finally {
      await fh.close();
    }
    if (fresh) await syncDir(dirname(resolve(this.journalPath)));
    mem.journal = { id: fileId(this.journalPath) ?? '', bytes: (fresh ? 0 : mem.journal!.bytes) + Buffer.byteLength(data), live: true };
  }
}

/** Thrown to undo a transaction that only asked whether an initializer would change the state. */
const ASKED = new Error('asked');
