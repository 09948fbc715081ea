import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { KvClient } from '../../src/kv/cluster/client.js';
import { RedirectRefused } from '../../src/kv/cluster/gateway-errors.js';
import { KvSession } from '../../src/kv/cluster/session.js';
import { runCli } from '../helpers/cli.js';

/**
 * The kv client against a member that answers redirects (a loopback server on port 0), and a second
 * loopback server as "another origin" that records every request it gets: it must get none. Only a
 * GET to the member's own origin is followed, without credentials; a POST is never sent again.
 */
interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

function server(handler: (req: IncomingMessage, body: string, res: ServerResponse) => void, log: Seen[]): Promise<{ url: string; close: () => Promise<void> }> {
  return new Promise((resolve) => {
    const s: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        log.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
        handler(req, body, res);
      });
    });
    s.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`,
        close: () => new Promise<void>((r) => s.close(() => r())),
      }),
    );
  });
}

describe('kv client redirects (loopback member and another origin)', () => {
  const otherSeen: Seen[] = [];
  const memberSeen: Seen[] = [];
  let other: Awaited<ReturnType<typeof server>>;
  let member: Awaited<ReturnType<typeof server>>;
  /** What the member answers to each path: a redirect (status, Location) or JSON. */
  let routes: Record<string, { status: number; location?: string; json?: unknown }> = {};

  beforeAll(async () => {
    other = await server(
      (_req, _body, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"header":{"revision":"9"},"token":"x"}'),
      otherSeen,
    );
    member = await server((req, _body, res) => {
      const r = routes[req.url ?? ''] ?? { status: 404, json: { error: 'not found', code: 5 } };
      if (r.location) return void res.writeHead(r.status, { location: r.location }).end();
      res.writeHead(r.status, { 'content-type': 'application/json' }).end(JSON.stringify(r.json));
    }, memberSeen);
  });
  afterAll(async () => {
    await other.close();
    await member.close();
  });
  beforeEach(() => {
    otherSeen.length = 0;
    memberSeen.length = 0;
    routes = {
      '/version': { status: 200, json: { etcdserver: '3.3.27', etcdcluster: '3.3.0' } },
      '/v3beta/maintenance/status': { status: 200, json: { header: { revision: '1', member_id: '1' }, version: '3.3.27', leader: '1' } },
    };
  });

  const client = (session = new KvSession()) => new KvClient(member.url, { session, timeoutMs: 5000 });

  for (const status of [307, 308]) {
    it(`a POST answered ${status} to another origin: refused naming the member, the status and the Location; the other origin receives nothing`, async () => {
      routes['/v3beta/kv/put'] = { status, location: `${other.url}/v3beta/kv/put` };
      const c = client();
      await c.version();
      const err = await c.put('k', 'v').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RedirectRefused);
      expect((err as Error).message).toBe(
        `${member.url}: the member answered HTTP ${status} redirecting to ${other.url}/v3beta/kv/put; not followed: it leads to another origin (${other.url})`,
      );
      expect(otherSeen).toEqual([]);
    });

    it(`with --user: the password (POST ${status} at authenticate) and the token (POST ${status} at put) never reach the other origin`, async () => {
      const session = new KvSession({ auth: { user: 'root', password: 'sekret-pw' } });
      routes['/v3beta/auth/authenticate'] = { status, location: `${other.url}/steal` };
      const c = client(session);
      await c.version();
      await expect(c.put('k', 'v')).rejects.toThrow(new RegExp(`HTTP ${status} redirecting to ${other.url}/steal; not followed: it leads to another origin`));
      expect(otherSeen).toEqual([]);
      // Authenticated, then the put redirected: the token stays with the member.
      routes['/v3beta/auth/authenticate'] = { status: 200, json: { token: 'tok-123' } };
      routes['/v3beta/kv/put'] = { status, location: `${other.url}/v3beta/kv/put` };
      const c2 = client(new KvSession({ auth: { user: 'root', password: 'sekret-pw' } }));
      await c2.version();
      await expect(c2.put('k', 'v')).rejects.toBeInstanceOf(RedirectRefused);
      expect(otherSeen).toEqual([]);
      expect(memberSeen.find((s) => s.url === '/v3beta/kv/put')?.headers.authorization).toBe('tok-123');
    });

    it(`a POST answered ${status} to the same origin is not sent again`, async () => {
      routes['/v3beta/kv/put'] = { status, location: '/elsewhere/put' };
      routes['/elsewhere/put'] = { status: 200, json: { header: { revision: '5' } } };
      const c = client();
      await c.version();
      await expect(c.put('k', 'v')).rejects.toThrow(
        `${member.url}: the member answered HTTP ${status} redirecting to /elsewhere/put; not followed: a POST is never sent again on a redirect`,
      );
      expect(memberSeen.map((s) => s.url)).not.toContain('/elsewhere/put');
    });

    it(`a GET answered ${status}: followed to the same origin (without credentials), refused to another`, async () => {
      routes['/health'] = { status, location: '/health2' };
      routes['/health2'] = { status: 200, json: { health: 'true' } };
      expect((await client().httpHealth()).healthy).toBe(true);
      expect(memberSeen.map((s) => `${s.method} ${s.url}`)).toEqual(['GET /health', 'GET /health2']);
      expect(memberSeen[1]?.headers.authorization).toBeUndefined();

      routes['/health'] = { status, location: `${other.url}/health` };
      await expect(client().httpHealth()).rejects.toThrow(`HTTP ${status} redirecting to ${other.url}/health; not followed: it leads to another origin`);
      expect(otherSeen).toEqual([]);
    });
  }

  it('a same-origin GET redirect loop ends after 5 redirects with the error', async () => {
    routes['/health'] = { status: 302, location: '/health' };
    await expect(client().httpHealth()).rejects.toThrow(/HTTP 302 redirecting to \/health; not followed: more than 5 redirects/);
    expect(memberSeen.length).toBe(5);
  });

  it('the CLI: kv put through a redirecting member exits 1 with the member, status and Location, and the other origin receives nothing', async () => {
    routes['/health'] = { status: 200, json: { health: 'true' } };
    routes['/v3beta/kv/put'] = { status: 307, location: `${other.url}/v3beta/kv/put` };
    routes['/v3beta/cluster/member/list'] = { status: 200, json: { header: {}, members: [{ ID: '1', name: 'm1', clientURLs: [member.url] }] } };
    const r = await runCli(['kv', 'put', 'k', 'v', '--endpoints', member.url]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`the member answered HTTP 307 redirecting to ${other.url}/v3beta/kv/put; not followed: it leads to another origin`);
    expect(otherSeen).toEqual([]);
  });
});
