/**
 * Splits a byte stream of JSON objects sent one after another (grpc-gateway's server streams: etcd
 * 3.2 writes `{…}{…}`, later releases `{…}\n{…}`) into whole objects, as the bytes arrive. Memory
 * is one message at a time, at most `maxMessageBytes`. Structural characters are ASCII, so UTF-8
 * inside strings never confuses the scan.
 */
export class JsonObjectStream {
  private parts: Buffer[] = [];
  private size = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Bytes seen in all (for error positions). */
  private offset = 0;

  constructor(private readonly maxMessageBytes = 16 * 1024 * 1024) {}

  /** Feeds a chunk; returns the objects it completed, parsed. */
  push(chunk: Uint8Array): unknown[] {
    return this.pushRaw(chunk).map((m, i) => {
      try {
        return JSON.parse(m.toString('utf8')) as unknown;
      } catch (err) {
        throw new Error(`message ${i + 1} of a chunk ending at byte ${this.offset} is not JSON: ${(err as Error).message}`);
      }
    });
  }

  /**
   * Feeds a chunk; returns the bytes of each object it completed (unparsed: a caller that knows the
   * shape can read it without building strings and objects). Valid until the next call.
   */
  pushRaw(chunk: Uint8Array): Buffer[] {
    const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const out: Buffer[] = [];
    let start = -1;
    let i = 0;
    while (i < buf.length) {
      if (this.depth === 0) {
        const b = buf[i] ?? 0;
        if (b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09) {
          i++;
          continue;
        }
        if (b !== 0x7b)
          throw new Error(`the stream holds ${JSON.stringify(String.fromCharCode(b))} at byte ${this.offset + i} where a JSON object should start`);
        start = i;
      }
      if (start < 0) start = i;
      if (this.inString) {
        // Jump to the next quote or backslash (a base64 blob is one long string without either).
        const q = buf.indexOf(0x22, i);
        const bs = buf.indexOf(0x5c, i);
        if (this.escaped) {
          this.escaped = false;
          i++;
          continue;
        }
        const next = q < 0 ? bs : bs < 0 ? q : Math.min(q, bs);
        if (next < 0) {
          i = buf.length;
          break;
        }
        if (next === bs) {
          this.escaped = true;
          i = next + 1;
          continue;
        }
        this.inString = false;
        i = next + 1;
        continue;
      }
      const b = buf[i] ?? 0;
      if (b === 0x22) this.inString = true;
      else if (b === 0x7b || b === 0x5b) this.depth++;
      else if (b === 0x7d || b === 0x5d) {
        this.depth--;
        if (this.depth === 0) {
          // A message within this chunk is not copied; one spread over chunks is joined once.
          if (this.parts.length === 0) {
            if (i + 1 - start > this.maxMessageBytes) throw new Error(`a message of the stream exceeds ${this.maxMessageBytes} bytes`);
            out.push(buf.subarray(start, i + 1));
          } else {
            this.add(buf.subarray(start, i + 1));
            out.push(Buffer.concat(this.parts));
          }
          this.parts = [];
          this.size = 0;
          start = -1;
        }
      }
      i++;
    }
    if (start >= 0 && this.depth > 0) this.add(buf.subarray(start));
    this.offset += buf.length;
    return out;
  }

  /** At the end of the stream: throws if a message was cut short. */
  end(): void {
    if (this.depth > 0 || this.inString) throw new Error(`the stream ended inside a message (at byte ${this.offset})`);
  }

  private add(b: Buffer): void {
    this.size += b.length;
    if (this.size > this.maxMessageBytes) throw new Error(`a message of the stream exceeds ${this.maxMessageBytes} bytes`);
    // A copy: the chunk's memory belongs to the stream.
    this.parts.push(Buffer.from(b));
  }
}
