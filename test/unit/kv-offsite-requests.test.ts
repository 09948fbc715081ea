import { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { Deadline, Requests, StoreTimeout, transient } from '../../src/kv/offsite/requests.js';

/** A command as Requests sees one (its answer's type read off resolveMiddleware). */
const command = { input: {}, resolveMiddleware: () => async () => ({ output: { $metadata: {} } }) };

/** A fake client: each send is answered by the next of ANSWERS (a function of the abort signal), counted. */
function client(...answers: Array<(signal: AbortSignal) => Promise<unknown>>) {
  const calls: number[] = [];
  const c = {
    send: (_c: unknown, o: { abortSignal: AbortSignal }) => {
      calls.push(Date.now());
      const next = answers[Math.min(calls.length - 1, answers.length - 1)]!;
      return next(o.abortSignal);
    },
  };
  return { client: c as unknown as S3Client, calls };
}

/** Never answers; rejects when aborted, as the SDK's handler does. */
const silent = (signal: AbortSignal) =>
  new Promise<never>((_, reject) =>
    signal.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' })), { once: true }),
  );
const fails = (err: object) => () => Promise.reject(Object.assign(new Error('failed'), err));
const answers = (value: unknown) => () => Promise.resolve(value);
const patience = { requestMs: 40, requestFlag: '--s3-timeout' };

describe('every request to the store bounded, retried with back-off within the deadline', () => {
  it('a store that never answers: each attempt ends at the request limit, three attempts, the flag named', async () => {
    const { client: c, calls } = client(silent);
    const err = await new Requests(c, patience).send(command, 'HeadObject').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreTimeout);
    expect((err as Error).message).toBe('the store did not answer HeadObject within 40ms (--s3-timeout) (3 attempts)');
    expect(calls).toHaveLength(3);
  });

  it('a transient failure (reset, 503, throttled) is retried; a refusal (403) is not', async () => {
    const reset = client(fails({ code: 'ECONNRESET' }), answers({ ok: 1 }));
    expect(await new Requests(reset.client, patience).send(command, 'ListObjectsV2')).toEqual({ ok: 1 });
    expect(reset.calls).toHaveLength(2);
    const busy = client(fails({ name: 'SlowDown', $metadata: { httpStatusCode: 503 } }), answers({ ok: 2 }));
    expect(await new Requests(busy.client, patience).send(command, 'UploadPart (part 1)')).toEqual({ ok: 2 });
    const denied = client(fails({ name: 'AccessDenied', $metadata: { httpStatusCode: 403 } }), answers({ ok: 3 }));
    await expect(new Requests(denied.client, patience).send(command, 'PutObject')).rejects.toMatchObject({ name: 'AccessDenied' });
    expect(denied.calls).toHaveLength(1);
    expect([transient({ code: 'ECONNREFUSED' }), transient({ name: 'NoSuchKey', $metadata: { httpStatusCode: 404 } })]).toEqual([true, false]);
  });

  it("the work's deadline bounds every attempt and the back-off: named with its flag", async () => {
    const { client: c } = client(silent);
    const slow = new Requests(c, { requestMs: 60_000, requestFlag: '--s3-timeout' });
    const err = await slow.send(command, 'UploadPart (part 2)', { deadline: Deadline.after(80, '80ms (--snapshot-timeout)') }).catch((e: unknown) => e);
    expect((err as Error).message).toBe('UploadPart (part 2): not done within 80ms (--snapshot-timeout)');
    // a deadline already past: no attempt at all
    const none = client(answers({}));
    await expect(new Requests(none.client, patience).send(command, 'X', { deadline: new Deadline(Date.now() - 1, '1s (--snapshot-timeout)') })).rejects.toThrow(
      'X: not done within 1s (--snapshot-timeout)',
    );
    expect(none.calls).toHaveLength(0);
  });

  it('given up before the deadline (the back-off would outlast it): the time spent and the limit, never "not done within" the whole', async () => {
    const reset = client(fails({ code: 'ECONNRESET' }));
    // (a clock that stands still: 190 ms are left when the back-off, 200 to 400 ms after a first failure, is weighed, however busy the machine)
    const d = Deadline.after(190, '190ms (--snapshot-timeout 1s, less the 810ms kept to clean up)', () => 1_000_000);
    const err = await new Requests(reset.client, patience).send(command, 'UploadPart (part 1)', { deadline: d }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreTimeout);
    expect((err as Error).message).toMatch(
      /^UploadPart \(part 1\): given up after \d+ms, as another attempt \(after \d+ms of back-off\) would end past 190ms \(--snapshot-timeout 1s, less the 810ms kept to clean up\); the last attempt: failed$/,
    );
    expect(reset.calls).toHaveLength(1);
  });

  it('Ctrl-C (the caller’s signal) ends the request at once and is never retried', async () => {
    const { client: c, calls } = client(silent);
    const ac = new AbortController();
    const sent = new Requests(c, { requestMs: 60_000, requestFlag: '--s3-timeout' }).send(command, 'UploadPart (part 1)', { signal: ac.signal });
    ac.abort(new Error('interrupted'));
    await expect(sent).rejects.toThrow();
    expect(calls).toHaveLength(1);
  });

  it('a download: each wait for the next bytes is bounded (a store that stops sending ends it), however long the whole takes', async () => {
    const body = new Readable({ read() {} });
    body.push(Buffer.from('first'));
    const { client: c } = client((signal) => {
      signal.addEventListener('abort', () => body.destroy(new Error('aborted')), { once: true });
      return Promise.resolve({ Body: body, $metadata: {} });
    });
    const got: string[] = [];
    const err = await new Requests(c, patience).read(command, 'GetObject', (chunk) => void got.push(chunk.toString())).catch((e: unknown) => e);
    expect(got).toEqual(['first']);
    expect(err).toBeInstanceOf(StoreTimeout);
    expect((err as Error).message).toBe('no bytes of GetObject for 40ms (--s3-timeout)');
  });
});
