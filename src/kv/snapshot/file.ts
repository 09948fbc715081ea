import { createHash, type Hash } from 'node:crypto';
import { open } from 'node:fs/promises';

/** Chunk of a streamed read: memory stays at this, whatever the file's size. */
export const CHUNK = 1 << 20;

/** The SHA-256 trailer etcd appends to a snapshot, checked by streaming the file from disk. */
export interface TrailerCheck {
  /** Bytes in the file. */
  size: number;
  /** SHA-256 of the whole file, trailer included (the journal's restore point keeps it). */
  sha256: string;
  /** Whether the last 32 bytes are the SHA-256 of everything before them. */
  ok: boolean;
  /** What the trailer says and what the content hashes to (hex). */
  stored: string;
  computed: string;
}

/**
 * Hashes FILE in one streamed pass (1 MiB at a time): the body (all but the last 32 bytes) for the
 * trailer check and the whole file for its identity.
 */
export async function checkTrailerOfFile(file: string, signal?: AbortSignal): Promise<TrailerCheck> {
  const fh = await open(file, 'r');
  try {
    const size = (await fh.stat()).size;
    // One hash pass: the body's, and the whole file's from a copy of it plus the trailer.
    const body = createHash('sha256');
    const buf = Buffer.alloc(Math.min(CHUNK, Math.max(size, 1)));
    const tail = Buffer.alloc(32);
    const bodyEnd = Math.max(0, size - 32);
    let pos = 0;
    while (pos < size) {
      signal?.throwIfAborted();
      const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, size - pos), pos);
      if (bytesRead === 0) throw new Error(`${file} shrank while it was read (at byte ${pos} of ${size})`);
      const chunk = buf.subarray(0, bytesRead);
      const inBody = Math.max(0, Math.min(bytesRead, bodyEnd - pos));
      if (inBody) body.update(chunk.subarray(0, inBody));
      if (inBody < bytesRead) chunk.copy(tail, pos + inBody - bodyEnd, inBody);
      pos += bytesRead;
    }
    const whole = body.copy().update(tail.subarray(0, Math.min(32, size)));
    const computed = body.digest('hex');
    const stored = size >= 32 ? tail.toString('hex') : '';
    return { size, sha256: whole.digest('hex'), ok: size > 32 && computed === stored, stored, computed };
  } finally {
    await fh.close();
  }
}

/** The trailer check as an error message, or undefined when it holds. */
export function trailerProblem(t: TrailerCheck): string | undefined {
  if (t.size <= 32) return `only ${t.size} bytes`;
  if (t.ok) return undefined;
  return `SHA-256 trailer mismatch (file says ${t.stored.slice(0, 12)}…, content hashes to ${t.computed.slice(0, 12)}…)`;
}

/** A SHA-256 that also remembers the last 32 bytes fed to it, for a stream whose length is not known. */
export class TrailerHasher {
  /** Everything but the held bytes; the whole stream's hash is a copy of it plus them (one hash pass). */
  private readonly body: Hash = createHash('sha256');
  /** The last (at most) 32 bytes seen, not yet in `body`. */
  private held = Buffer.alloc(0);
  bytes = 0;

  update(chunk: Buffer): void {
    this.bytes += chunk.length;
    if (chunk.length >= 32) {
      // Everything held so far, and all of this chunk but its last 32 bytes, is body.
      this.body.update(this.held);
      this.body.update(chunk.subarray(0, chunk.length - 32));
      this.held = Buffer.from(chunk.subarray(chunk.length - 32));
      return;
    }
    const all = Buffer.concat([this.held, chunk]);
    const keep = Math.min(32, all.length);
    if (all.length > keep) this.body.update(all.subarray(0, all.length - keep));
    this.held = Buffer.from(all.subarray(all.length - keep));
  }

  finish(): TrailerCheck {
    const whole = this.body.copy().update(this.held);
    const computed = this.body.digest('hex');
    const stored = this.held.length === 32 ? this.held.toString('hex') : '';
    return { size: this.bytes, sha256: whole.digest('hex'), ok: this.bytes > 32 && stored === computed, stored, computed };
  }
}

/** Where a snapshot's bytes go as they land on disk (an upload under way): each chunk in order, then `end`. */
export interface SnapshotTee {
  /** CHUNK may be reused by the caller once this resolves. */
  write(chunk: Buffer): Promise<void>;
  end(): Promise<void>;
}
