import { createHash, createPublicKey, verify } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { DEFAULT_CLIENT_ID, DEFAULT_CLIENT_SECRET } from '@opsctl/mock/services/oauth/registry.js';
import { signingKey } from '@opsctl/mock/services/oauth/jwt.js';
import { mintRefreshToken } from '@opsctl/mock/services/oauth/tokens.js';
import { startMock } from '../helpers/mock.js';
import { postForm } from '../helpers/oauth-browser.js';

// Security events (seed 000, "Events"): signed SETs (RFC 8417) pushed to a receiver (RFC 8935) that
// this test runs on port 0 and that checks every signature against the mock's JWKS.

const BASE = 'https://schemas.openid.net/secevent';
const ALICE = { sub: '110000000000000000001', email: 'alice@example.com' };
const BOB = { sub: '110000000000000000002', email: 'bob@example.com' };
const FAST = { events: { retryMinMs: 20, retryMaxMs: 200, timeoutMs: 2_000 } };

interface Received {
  header: Record<string, any>;
  claims: Record<string, any>;
  contentType: string;
}

/** An RFC 8935 receiver: verifies each SET against the JWKS, answers 202 (or `answer`), counts by jti. */
class Receiver {
  server?: Server;
  port = 0;
  keys = new Map<string, ReturnType<typeof createPublicKey>>();
  byJti = new Map<string, number>();
  sets: Received[] = [];
  answer = 202;
  badSignatures = 0;

  async loadJwks(mockUrl: string): Promise<void> {
    const res = await request(`${mockUrl}/oauth2/v3/certs`);
    const doc = (await res.body.json()) as { keys: Array<{ kid: string } & Record<string, string>> };
    for (const k of doc.keys) this.keys.set(k.kid, createPublicKey({ key: k as never, format: 'jwk' }));
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const token = Buffer.concat(chunks).toString('utf8');
        const [h, c, sig] = token.split('.');
        const header = JSON.parse(Buffer.from(h!, 'base64url').toString());
        const key = this.keys.get(header.kid);
        if (!key || !verify('sha256', Buffer.from(`${h}.${c}`), key, Buffer.from(sig!, 'base64url'))) {
          this.badSignatures++;
          res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ err: 'invalid_key', description: 'signature does not verify' }));
          return;
        }
        const claims = JSON.parse(Buffer.from(c!, 'base64url').toString());
        if (this.answer === 202) {
          this.byJti.set(claims.jti, (this.byJti.get(claims.jti) ?? 0) + 1);
          this.sets.push({ header, claims, contentType: String(req.headers['content-type']) });
        }
        res.writeHead(this.answer).end();
      });
    });
    await listen(this.server, this.port);
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (s)
      await new Promise<void>((resolve) => {
        s.close(() => resolve());
        s.closeAllConnections();
      });
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/secevents`;
  }
}

async function listen(server: Server, port: number): Promise<void> {
  // The same port again after an outage: it may take a moment to be free.
  for (let i = 0; ; i++) {
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => {
          server.off('error', reject);
          resolve();
        });
      });
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || i > 50) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function waitFor(cond: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function call(url: string, method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown) {
  const res = await request(`${url}/oauth2/mock${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: text ? JSON.parse(text) : undefined };
}

describe('security events pushed to a receiver', () => {
  let mock: Awaited<ReturnType<typeof startMock>>;
  const rcv = new Receiver();
  const admin = (method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown) => call(mock.url, method, path, body);
  let aliceRt = '';

  beforeAll(async () => {
    mock = await startMock({ services: ['oauth'], options: { oauth: FAST } });
    // alice and bob have granted opsctl's client: its receiver hears about their accounts.
    [aliceRt] = await mock.store.write((s) => [
      mintRefreshToken(s, { client_id: DEFAULT_CLIENT_ID, ...ALICE, scopes: ['email'] }, Date.now()).token,
      mintRefreshToken(s, { client_id: DEFAULT_CLIENT_ID, ...BOB, scopes: ['email'] }, Date.now()).token,
    ]);
    await rcv.start();
    const r = await admin('POST', '/events/receivers', { url: rcv.url, client_id: DEFAULT_CLIENT_ID });
    expect(r.status).toBe(201);
    await mock.store.write((s) => void signingKey(s)); // the key the JWKS publishes (made on first use otherwise)
    await rcv.loadJwks(mock.url);
  });
  afterAll(async () => {
    await mock.close();
    await rcv.stop();
  });

  it('sessions-revoked: a SET signed with the key of the JWKS, RFC 8935 push, 202, listed as delivered', async () => {
    const t = await admin('POST', '/events', { event: 'sessions-revoked', user: 'alice@example.com' });
    expect(t.status).toBe(201);
    await waitFor(() => rcv.sets.length >= 1 || rcv.badSignatures > 0, 'the first SET');
    expect(rcv.badSignatures).toBe(0);
    const got = rcv.sets[0]!;
    expect(got.contentType).toBe('application/secevent+jwt');
    expect(got.header).toMatchObject({ alg: 'RS256', typ: 'secevent+jwt' });
    expect(got.claims).toMatchObject({ iss: mock.url, aud: DEFAULT_CLIENT_ID, jti: expect.any(String), iat: expect.any(Number) });
    expect(got.claims.events).toEqual({
      [`${BASE}/risc/event-type/sessions-revoked`]: { subject: { subject_type: 'iss-sub', iss: mock.url, sub: ALICE.sub } },
    });
    const list = (await admin('GET', '/events')).json.events;
    expect(list.find((e: any) => e.jti === got.claims.jti)).toMatchObject({ status: 'delivered', attempts: 1, last_status: 202, event: 'sessions-revoked' });
  });

  it('token-revoked: from the revoke endpoint, naming the token by its SHA-512 hash', async () => {
    const [rt] = await mock.store.write((s) => [mintRefreshToken(s, { client_id: DEFAULT_CLIENT_ID, ...BOB, scopes: ['email'] }, Date.now()).token]);
    const before = rcv.sets.length;
    const rev = await postForm(`${mock.url}/revoke`, { token: rt });
    expect(rev.status).toBe(200);
    await waitFor(() => rcv.sets.length > before, 'the token-revoked SET');
    const ev = rcv.sets.at(-1)!.claims.events[`${BASE}/oauth/event-type/token-revoked`];
    expect(ev.subject).toEqual({
      subject_type: 'oauth_token',
      token_type: 'refresh_token',
      token_identifier_alg: 'hash_base64_sha512',
      token: createHash('sha512').update(rt).digest('base64'),
    });
    // Revoking it again is the endpoint's usual 400, and no second event.
    expect((await postForm(`${mock.url}/revoke`, { token: rt })).status).toBe(400);
  });

  it('account-disabled: refresh fails with invalid_grant; account-enabled: it works again', async () => {
    const refresh = () =>
      postForm(`${mock.url}/token`, {
        grant_type: 'refresh_token',
        refresh_token: aliceRt,
        client_id: DEFAULT_CLIENT_ID,
        client_secret: DEFAULT_CLIENT_SECRET,
      });
    expect((await refresh()).status).toBe(200);
    const t = await admin('POST', '/events', { event: 'account-disabled', user: ALICE.sub, reason: 'bulk-account' });
    expect(t.json.events[0]).toMatchObject({ status: 'delivered', event_type: `${BASE}/risc/event-type/account-disabled` });
    const ev = rcv.sets.at(-1)!.claims.events[`${BASE}/risc/event-type/account-disabled`];
    expect(ev).toEqual({ subject: { subject_type: 'iss-sub', iss: mock.url, sub: ALICE.sub }, reason: 'bulk-account' });
    const r = await refresh();
    expect(r.status).toBe(400);
    expect(r.json.error).toBe('invalid_grant');
    expect((await admin('POST', '/events', { event: 'account-disabled', user: 'alice@example.com' })).status).toBe(409);
    expect((await admin('POST', '/events', { event: 'account-enabled', user: 'alice@example.com' })).status).toBe(201);
    expect(Object.keys(rcv.sets.at(-1)!.claims.events)).toEqual([`${BASE}/risc/event-type/account-enabled`]);
    expect((await refresh()).status).toBe(200);
  });

  it("token-revoked trigger revokes the user's tokens for the client; bad triggers are 4xx naming the field", async () => {
    const t = await admin('POST', '/events', { event: 'token-revoked', user: 'alice@example.com', client_id: DEFAULT_CLIENT_ID });
    expect(t.status).toBe(201);
    expect(t.json.events.every((e: any) => e.status === 'delivered')).toBe(true);
    const r = await postForm(`${mock.url}/token`, {
      grant_type: 'refresh_token',
      refresh_token: aliceRt,
      client_id: DEFAULT_CLIENT_ID,
      client_secret: DEFAULT_CLIENT_SECRET,
    });
    expect(r.json.error).toBe('invalid_grant');
    const cases: Array<[unknown, number, string]> = [
      [{ user: 'alice@example.com' }, 400, 'event'],
      [{ event: 'password-changed', user: 'alice@example.com' }, 400, 'event'],
      [{ event: 'sessions-revoked' }, 400, 'user'],
      [{ event: 'sessions-revoked', user: 'nobody@example.com' }, 404, 'user'],
      [{ event: 'token-revoked', user: 'alice@example.com' }, 400, 'client_id'],
      [{ event: 'token-revoked', user: 'alice@example.com', client_id: DEFAULT_CLIENT_ID }, 409, 'client_id'],
      [{ event: 'sessions-revoked', user: 'alice@example.com', reason: 'hijacking' }, 400, 'reason'],
      [{ event: 'account-disabled', user: 'alice@example.com', reason: 'bored' }, 400, 'reason'],
    ];
    for (const [body, status, field] of cases) {
      const res = await admin('POST', '/events', body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.json.error_description.startsWith(`${field}:`), res.json.error_description).toBe(true);
    }
    expect((await admin('POST', '/events/receivers', { url: 'ftp://x', client_id: DEFAULT_CLIENT_ID })).json.error_description).toMatch(/^url:/);
    expect((await admin('POST', '/events/receivers', { url: 'http://u:secret@127.0.0.1:1/', client_id: DEFAULT_CLIENT_ID })).json.error_description).toMatch(
      /^url: must not carry credentials/,
    );
    expect((await admin('POST', '/events/receivers', { url: rcv.url, client_id: 'nobody' })).status).toBe(404);
    expect((await admin('POST', '/events/receivers', { url: rcv.url, client_id: DEFAULT_CLIENT_ID, events: ['x'] })).json.error_description).toMatch(
      /^events:/,
    );
    expect((await admin('GET', '/events?status=lost')).status).toBe(400);
    expect((await admin('DELETE', '/events/receivers/__proto__')).status).toBe(404);
  });

  it('a receiver outage loses nothing: down, 12 events triggered, up again, each delivered exactly once by jti', async () => {
    const before = new Set(rcv.byJti.keys());
    await rcv.stop();
    const sent: string[] = [];
    for (let i = 0; i < 4; i++) {
      for (const [event, user] of [
        ['sessions-revoked', 'alice@example.com'],
        ['sessions-revoked', 'bob@example.com'],
        [i % 2 === 0 ? 'account-disabled' : 'account-enabled', 'bob@example.com'],
      ] as const) {
        const t = await admin('POST', '/events', { event, user });
        expect(t.status).toBe(201);
        for (const e of t.json.events) {
          expect(e.status).toBe('pending'); // the first attempt failed: the receiver is down
          expect(e.last_error).toMatch(/ECONNREFUSED|connect/);
          sent.push(e.jti);
        }
      }
    }
    const pending = (await admin('GET', '/events?status=pending')).json.events.length;
    expect(pending).toBeGreaterThanOrEqual(12);
    // Retries keep failing while it is down.
    await waitFor(async () => (await admin('GET', '/events?status=pending')).json.events.some((e: any) => e.attempts >= 3), 'a few retries');
    await rcv.start();
    await waitFor(async () => (await admin('GET', '/events?status=pending')).json.events.length === 0, 'every pending SET delivered');
    const all = (await admin('GET', '/events')).json.events as any[];
    const afterOutage = all.filter((e) => !before.has(e.jti));
    const delivered = afterOutage.filter((e) => e.status === 'delivered').length;
    const lost = afterOutage.filter((e) => !rcv.byJti.has(e.jti)).length;
    const dupes = [...rcv.byJti.values()].filter((n) => n > 1).length;
    console.log(`receiver outage: ${afterOutage.length} SETs queued while down, ${delivered} delivered, ${lost} lost, ${dupes} duplicated`);
    expect(sent).toHaveLength(12);
    expect(afterOutage.map((e) => e.jti).sort()).toEqual([...sent].sort());
    for (const jti of sent) expect(rcv.byJti.get(jti), jti).toBe(1);
    expect(lost).toBe(0);
    expect(dupes).toBe(0);
    expect(rcv.badSignatures).toBe(0);
  }, 120_000);

  it('a 400 from the receiver is its final word (rejected, not retried)', async () => {
    rcv.answer = 400;
    const t = await admin('POST', '/events', { event: 'sessions-revoked', user: 'bob@example.com' });
    expect(t.json.events[0]).toMatchObject({ status: 'rejected', attempts: 1, last_status: 400 });
    rcv.answer = 202;
    expect((await admin('POST', '/events/deliver')).json.pending).toBe(0);
  });
});

describe("the queue survives in the mock's state", () => {
  it('a mock restarted on the same state file delivers what the last one could not', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'opsctl-secevents-'));
    const state = join(dir, 'state.json');
    const rcv = new Receiver();
    await rcv.start();
    const port = rcv.port;
    await rcv.stop();
    rcv.port = port;
    try {
      const m1 = await startMock({ services: ['oauth'], state, options: { oauth: FAST } });
      await m1.store.write((s) => void mintRefreshToken(s, { client_id: DEFAULT_CLIENT_ID, ...ALICE, scopes: ['email'] }, Date.now()));
      await call(m1.url, 'POST', '/events/receivers', { url: rcv.url, client_id: DEFAULT_CLIENT_ID });
      const jtis: string[] = [];
      for (let i = 0; i < 3; i++)
        jtis.push(...(await call(m1.url, 'POST', '/events', { event: 'sessions-revoked', user: 'alice@example.com' })).json.events.map((e: any) => e.jti));
      expect(jtis).toHaveLength(3);
      await m1.close(); // stops the delivery loop; the SETs stay queued in the file

      const m2 = await startMock({ services: ['oauth'], state, options: { oauth: FAST } });
      try {
        await rcv.loadJwks(m2.url);
        await rcv.start();
        await m2.service('oauth'); // loading the service resumes delivery
        await waitFor(() => jtis.every((j) => rcv.byJti.get(j) === 1), 'the queued SETs');
        // The receiver's 202 reaches the mock before the mock records the delivery: wait for the record too.
        const delivered = async () =>
          ((await call(m2.url, 'GET', '/events')).json.events as any[])
            .filter((e) => e.status === 'delivered')
            .map((e) => e.jti)
            .sort();
        await waitFor(async () => (await delivered()).length === jtis.length, 'the deliveries recorded');
        expect(rcv.badSignatures).toBe(0);
        expect(await delivered()).toEqual([...jtis].sort());
        expect(jtis.every((j) => rcv.byJti.get(j) === 1)).toBe(true);
      } finally {
        await m2.close();
      }
    } finally {
      await rcv.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
