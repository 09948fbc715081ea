import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { JsonObjectStream } from '../../src/kv/cluster/json-stream.js';
import { TrailerHasher } from '../../src/kv/snapshot/file.js';

/** The gateway's snapshot stream as etcd 3.2 writes it (objects back to back) and 3.3+ (newline between), cut anywhere. */
describe('the gateway snapshot stream, parsed incrementally', () => {
  const db = Buffer.from(Array.from({ length: 100_000 }, (_, i) => (i * 7919) % 251));
  const file = Buffer.concat([db, createHash('sha256').update(db).digest()]);
  const messages = (sep: string) => {
    const out: string[] = [];
    for (let i = 0; i < file.length; i += 32 * 1024)
      out.push(
        JSON.stringify({ result: { blob: file.subarray(i, i + 32 * 1024).toString('base64'), remaining_bytes: String(Math.max(0, file.length - i - 32768)) } }),
      );
    return Buffer.from(out.join(sep));
  };

  for (const [name, sep] of [
    ['etcd 3.2: {…}{…}', ''],
    ['etcd 3.3+: {…}\\n{…}', '\n'],
  ] as const) {
    it(`${name}: every cut of the byte stream gives back the same file, hashed on the way`, () => {
      const stream = messages(sep);
      for (const cut of [1, 7, 1000, 43_744, 65_536, stream.length]) {
        const p = new JsonObjectStream();
        const h = new TrailerHasher();
        const parts: Buffer[] = [];
        for (let i = 0; i < stream.length; i += cut) {
          for (const m of p.push(stream.subarray(i, i + cut))) {
            const blob = Buffer.from((m as { result: { blob: string } }).result.blob, 'base64');
            parts.push(blob);
            h.update(blob);
          }
        }
        p.end();
        expect(Buffer.concat(parts).equals(file), `cut ${cut}`).toBe(true);
        expect(h.finish()).toMatchObject({ ok: true, size: file.length, sha256: createHash('sha256').update(file).digest('hex') });
      }
    });
  }

  it('strings with escapes and braces, arrays, whitespace between objects', () => {
    const p = new JsonObjectStream();
    const text = ' {"a":"}{\\"\\\\","b":[1,{"c":"]"}]}\r\n\t{"error":{"message":"x"}} ';
    const got = [...text].flatMap((ch) => p.push(Buffer.from(ch)));
    p.end();
    expect(got).toEqual([{ a: '}{"\\', b: [1, { c: ']' }] }, { error: { message: 'x' } }]);
  });

  it('refuses what is not a stream of objects, and a stream cut inside a message', () => {
    expect(() => new JsonObjectStream().push(Buffer.from('{"a":1}x'))).toThrow(/holds "x" at byte 7 where a JSON object should start/);
    const p = new JsonObjectStream();
    p.push(Buffer.from('{"result":{"blob":"AAA'));
    expect(() => p.end()).toThrow(/ended inside a message/);
    expect(() => new JsonObjectStream(100).push(Buffer.from(`{"a":"${'x'.repeat(200)}"}`))).toThrow(/exceeds 100 bytes/);
  });

  it('a stream shorter than a trailer is not ok', () => {
    const h = new TrailerHasher();
    h.update(Buffer.alloc(20));
    expect(h.finish().ok).toBe(false);
  });
});
