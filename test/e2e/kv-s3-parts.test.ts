import { createHash, randomBytes } from 'node:crypto';
import { GetObjectCommand, HeadObjectCommand, ListMultipartUploadsCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OffsiteStore } from '../../src/kv/offsite/store.js';
import { PART_BYTES } from '../../src/kv/offsite/parts.js';
import { haveS3Server, startS3Server, type S3Server } from '../helpers/s3-server.js';

/**
 * The streamed upload itself against a real S3-compatible server (versitygw): chunks of any size cut
 * into 5 MiB parts, each part's SHA-256 checked by the store, the composite the store reports equal to
 * what was sent, the object byte for byte the stream; a stream whose bytes are not the snapshot's
 * facts is never completed, and nothing of it stays on the store.
 */
describe.runIf(haveS3Server())('the streamed multipart upload (real versitygw)', () => {
  let s3: S3Server;
  let store: OffsiteStore;
  const target = { bucket: 'parts', prefix: 'p' };
  const saved = { ...process.env };

  beforeAll(async () => {
    s3 = await startS3Server();
    await s3.bucket('parts');
    Object.assign(process.env, s3.env);
    store = await OffsiteStore.open({ endpointUrl: s3.url });
  }, 60_000);
  afterAll(async () => {
    process.env = saved;
    await s3?.stop();
  });

  const object = async (key: string) => {
    const r = await s3.root.send(new GetObjectCommand({ Bucket: 'parts', Key: key }));
    return Buffer.from(await r.Body!.transformToByteArray());
  };
  const facts = (data: Buffer) => ({ bytes: data.length, sha256: createHash('sha256').update(data).digest('hex'), revision: '7' });

  for (const [name, size, chunk] of [
    ['two parts and 3 bytes, in chunks that straddle the parts', 2 * PART_BYTES + 3, 777_777],
    ['exactly two parts (no empty third)', 2 * PART_BYTES, 1 << 20],
    ['less than one part', 1000, 300],
    ['nothing at all', 0, 1],
  ] as const) {
    it(`${name}: the store's object is the stream, its composite SHA-256 the one sent, its manifest last`, async () => {
      const data = randomBytes(size);
      const up = await store.beginSnapshot(target, `${size}.db`);
      for (let at = 0; at < data.length; at += chunk) {
        // the writer copies: the caller's buffer is overwritten at once, as the snapshot follower's is
        const piece = Buffer.from(data.subarray(at, at + chunk));
        await up.write(piece);
        piece.fill(0);
      }
      await up.end();
      const { manifest, verifiedBy } = await up.finish(facts(data));
      expect(verifiedBy).toBe('store-checksum');
      expect(manifest).toMatchObject({ key: `p/${size}.db`, bytes: size, sha256: facts(data).sha256 });
      expect((await object(`p/${size}.db`)).equals(data)).toBe(true);
      const head = await s3.root.send(new HeadObjectCommand({ Bucket: 'parts', Key: `p/${size}.db`, ChecksumMode: 'ENABLED' }));
      const parts = Math.max(1, Math.ceil(size / PART_BYTES));
      expect(head.ChecksumSHA256).toMatch(new RegExp(`-${parts}$`));
      expect(JSON.parse((await object(`p/${size}.db.manifest.json`)).toString())).toMatchObject({ kind: 'opsctl-kv-snapshot', bytes: size });
    }, 60_000);
  }

  it('a stream that is not the snapshot the facts describe: refused, the object and every part gone, no manifest', async () => {
    const data = randomBytes(PART_BYTES + 10);
    const up = await store.beginSnapshot(target, 'wrong.db');
    await up.write(data);
    await up.end();
    const other = facts(Buffer.concat([data, Buffer.from('x')]));
    await expect(up.finish(other)).rejects.toThrow(/s3:\/\/parts\/p\/wrong\.db: \d+ bytes were sent, but the snapshot holds \d+/);
    await expect(object('p/wrong.db')).rejects.toThrow();
    await expect(object('p/wrong.db.manifest.json')).rejects.toThrow();
    const open = await s3.root.send(new ListMultipartUploadsCommand({ Bucket: 'parts', Prefix: 'p/wrong' }));
    expect(open.Uploads ?? []).toEqual([]);
  }, 60_000);
});
