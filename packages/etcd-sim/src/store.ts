/**
 * A simulated member's state on disk: member/kv.json (the whole state, as messages.ts's Persisted) and
 * member/kv.log beside it, one JSON line per change since kv.json was written. A put or delete appends
 * a line (the state without its keys, and each key it touched, null when deleted) where writing the
 * whole state cost ~1.4 ms of CPU per write at 1,600 keys; once the log outgrows twice the state (or
 * 64 KiB) the whole state is written again (a temporary file renamed over kv.json) and the log starts over.
 * Any other change (the cluster version, a downgrade, a copy of the leader's state) writes the whole state.
 *
 * Like the whole-file write it replaces, every save is made before the member answers and goes to the
 * page cache without fsync: it survives the member's kill -9, not the machine's crash. The log's first
 * line names the kv.json it follows (a SHA-256 of its bytes): a log left by a kill between the rename
 * of kv.json and the log's own (or beside a kv.json written by someone else: a restore) is not replayed.
 * A last line without its newline (the member killed mid-append) is ignored; so is anything after a
 * line that does not read as a change. A data dir without a log (written before the log existed) loads
 * from kv.json alone.
 */
import { createHash } from 'node:crypto';
import { closeSync, constants, existsSync, openSync, readFileSync, renameSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { emptyDict, own } from '@opsctl/shared/lookup.js';
import { asObject } from '@opsctl/shared/json.js';
import { isKv, readState, type Kv, type Persisted } from './messages.js';

/** The log is never compacted below this size (a small state would be rewritten every few writes). */
const MIN_LOG_BYTES = 64 * 1024;

/** What load() found: the state (undefined: no kv.json), and what of the log was replayed or left out. */
export interface Loaded {
  state?: Persisted;
  replayed: number;
  /** Why (part of) the log was not replayed: a torn last line, a line that is not a change, a log of another kv.json. */
  skipped?: string;
}

const digest = (text: string) => createHash('sha256').update(text).digest('hex');

/** The state without its keys, as one line stores it: everything but `kvs` (the revision, cluster version, downgrade, clients, …). */
function metaOf(st: Persisted): Omit<Persisted, 'kvs'> {
  const { kvs: _kvs, ...meta } = st;
  return meta;
}

/** One log line applied to `st` (in place); false when it is not a change (nothing applied). */
function applyLine(st: { value: Persisted }, line: string): boolean {
  let o: Record<string, unknown>;
  let changed: Record<string, unknown>;
  let meta: Persisted;
  try {
    o = asObject(JSON.parse(line));
    changed = asObject(o.k);
    meta = readState({ ...asObject(o.m), kvs: {} });
  } catch {
    return false;
  }
  const values = Object.values(changed);
  if (o.k === undefined || !values.every((v) => v === null || isKv(v))) return false;
  const kvs = st.value.kvs;
  for (const [key, kv] of Object.entries(changed)) {
    if (kv === null) delete kvs[key];
    else kvs[key] = kv as Kv;
  }
  st.value = { ...meta, kvs };
  return true;
}

export class MemberStore {
  readonly stateFile: string;
  readonly logFile: string;
  /** The log, open for appending (undefined: the next save writes the whole state). */
  private fd: number | undefined;
  private logBytes = 0;
  private stateBytes = 0;
  /** The kv.json on disk (its digest) and the length of its log's first line. */
  private base: { digest: string; headBytes: number } | undefined;

  constructor(memberDir: string) {
    this.stateFile = join(memberDir, 'kv.json');
    this.logFile = join(memberDir, 'kv.log');
  }

  /** The state as the last save left it: kv.json, then each change of the log that follows it. */
  load(): Loaded {
    if (!existsSync(this.stateFile)) return { replayed: 0 };
    const text = readFileSync(this.stateFile, 'utf8');
    const st = { value: readState(JSON.parse(text)) };
    if (!existsSync(this.logFile)) return { state: st.value, replayed: 0 };
    const lines = readFileSync(this.logFile, 'utf8').split('\n');
    // The text after the last newline: '' when the last append finished, else a torn line.
    const torn = lines.pop();
    const [head, ...changes] = lines;
    const d = digest(text);
    if (head === undefined || asObject(parseOr(head)).state !== d) {
      return { state: st.value, replayed: 0, skipped: 'the log follows another kv.json' };
    }
    this.base = { digest: d, headBytes: Buffer.byteLength(head) + 1 };
    let replayed = 0;
    for (const line of changes) {
      if (!applyLine(st, line)) return { state: st.value, replayed, skipped: `line ${replayed + 2} is not a change: it and what follows are left out` };
      replayed++;
    }
    return { state: st.value, replayed, ...(torn ? { skipped: 'a torn last line (the member was killed mid-write)' } : {}) };
  }

  /**
   * Stores the change just made to `st`. With the keys it touched (absent from `st.kvs`: deleted; none:
   * only the rest of the state changed): one line of the log, the state without its keys and those
   * keys. Without them: the whole state, whatever changed (a change whose keys are not named is never lost).
   */
  save(st: Persisted, changed?: readonly string[]): void {
    if (changed === undefined) return this.compact(st);
    if (this.fd === undefined) return this.compact(st);
    const k = emptyDict<Kv | null>();
    for (const key of changed) k[key] = own(st.kvs, key) ?? null;
    const line = Buffer.from(`${JSON.stringify({ m: metaOf(st), k })}\n`);
    if (this.logBytes + line.length > Math.max(MIN_LOG_BYTES, 2 * this.stateBytes)) return this.compact(st);
    try {
      writeAll(this.fd, line);
    } catch (err) {
      // A line cut short (a full disk) must not be followed by others: the next save writes the whole state.
      this.close();
      throw err;
    }
    this.logBytes += line.length;
  }

  /** Writes the whole state (a temporary file renamed over kv.json), then a new log that follows it. */
  compact(st: Persisted): void {
    const text = JSON.stringify(st);
    const d = digest(text);
    this.stateBytes = Buffer.byteLength(text);
    if (d === this.base?.digest) {
      // kv.json already holds this very state (it came back to it): its log is only emptied, never left
      // behind a kv.json it would replay onto twice.
      truncateSync(this.logFile, this.base.headBytes);
      this.fd ??= openSync(this.logFile, 'a');
      this.logBytes = this.base.headBytes;
      return;
    }
    const tmp = `${this.stateFile}.tmp`;
    writeFileSync(tmp, text);
    renameSync(tmp, this.stateFile);
    this.base = undefined;
    this.close();
    const logTmp = `${this.logFile}.tmp`;
    const head = Buffer.from(`${JSON.stringify({ kvlog: 1, state: d })}\n`);
    const fd = openSync(logTmp, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_APPEND);
    try {
      writeAll(fd, head);
      renameSync(logTmp, this.logFile);
    } catch (err) {
      closeSync(fd);
      throw err;
    }
    this.fd = fd;
    this.logBytes = head.length;
    this.base = { digest: d, headBytes: head.length };
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

function parseOr(line: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return undefined;
  }
}

/** The whole buffer at the end of the log (a write may take less than asked). */
function writeAll(fd: number, buf: Buffer): void {
  for (let off = 0; off < buf.length;) off += writeSync(fd, buf, off);
}
