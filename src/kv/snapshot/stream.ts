import { open } from 'node:fs/promises';
import { OpsError } from '../../core/errors.js';
import type { KvClient } from '../cluster/client.js';
import { isNetworkish } from '../cluster/transport-rules.js';
import { JsonObjectStream } from '../cluster/json-stream.js';
import { asObject, parseJsonSafe, textOf } from '../cluster/parse.js';
import { TrailerHasher, type SnapshotTee, type TrailerCheck } from './file.js';

/**
 * The snapshot stream of /maintenance/snapshot (the db file with its SHA-256 trailer), decoded
 * message by message into FILE (created 0600) as it arrives (and to `tee`): memory stays at one
 * message whatever the size; SIGNAL ends it. Returns the file's trailer check (hashed on the way).
 */
export async function snapshotToFile(client: KvClient, file: string, timeoutMs: number, tee?: SnapshotTee, signal?: AbortSignal): Promise<TrailerCheck> {
  const fh = await open(file, 'w', 0o600);
  const hasher = new TrailerHasher();
  try {
    await client.gatewayStream(
      '/maintenance/snapshot',
      (body) =>
        readBlobs(client.endpoint, body, async (blob) => {
          // interrupted (Ctrl-C, or the upload it feeds has failed): the stream ends here
          signal?.throwIfAborted();
          hasher.update(blob);
          await fh.write(blob);
          if (tee) await tee.write(blob);
        }),
      timeoutMs,
    );
    if (tee) await tee.end();
  } finally {
    await fh.close();
  }
  return hasher.finish();
}

/** The whole snapshot in memory (small ones: tests and the simulated members). */
export async function snapshotBuffer(client: KvClient, timeoutMs: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  await client.gatewayStream(
    '/maintenance/snapshot',
    (body) =>
      readBlobs(client.endpoint, body, (b) => {
        parts.push(b);
        return Promise.resolve();
      }),
    timeoutMs,
  );
  return Buffer.concat(parts);
}

/** Each message's blob of a snapshot stream, in order; an unreadable stream is said so, with the way around it. */
async function readBlobs(endpoint: string, body: AsyncIterable<Uint8Array>, take: (blob: Buffer) => Promise<void>): Promise<void> {
  const stream = new JsonObjectStream();
  try {
    for await (const chunk of body)
      for (const m of stream.pushRaw(chunk)) await take(snapshotBlobFast(m) ?? snapshotBlob(endpoint, parseJsonSafe(m.toString('utf8'))));
    stream.end();
  } catch (err) {
    if (isNetworkish(err) || err instanceof OpsError || (err as NodeJS.ErrnoException).syscall) throw err;
    throw new OpsError(`${endpoint}: the snapshot stream is unreadable: ${(err as Error).message}`, 1, {
      code: 'snapshot_stream',
      hint: 'try again, another member with --endpoint, or --via etcdctl',
    });
  }
}

/** One message of the snapshot stream: its blob, decoded; an error message is thrown. */
function snapshotBlob(endpoint: string, m: unknown): Buffer {
  const msg = asObject(m);
  if (msg.error) throw new OpsError(`${endpoint}: snapshot failed: ${textOf(asObject(msg.error).message) ?? JSON.stringify(msg.error).slice(0, 200)}`);
  const blob = textOf(asObject(msg.result).blob);
  if (blob === undefined && msg.result === undefined) throw new OpsError(`${endpoint}: the snapshot stream holds a message without a result`);
  return Buffer.from(blob ?? '', 'base64');
}

const BLOB_HEAD = Buffer.from('{"result":{"blob":"');

/**
 * The blob of a snapshot message of the usual shape, read straight from its bytes (no JSON objects
 * built: a multi-GB stream would otherwise churn the heap); undefined for any other shape.
 */
function snapshotBlobFast(m: Buffer): Buffer | undefined {
  if (!m.subarray(0, BLOB_HEAD.length).equals(BLOB_HEAD)) return undefined;
  const end = m.indexOf(0x22, BLOB_HEAD.length);
  if (end < 0 || m.indexOf(0x5c, BLOB_HEAD.length) !== -1) return undefined;
  const b64 = m.toString('latin1', BLOB_HEAD.length, end);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) return undefined;
  return Buffer.from(b64, 'base64');
}
