import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { runCli, type RunResult } from './cli.js';

/**
 * A kv verb against fake etcd members, as gh tests a verb's run with httpmock: one node:http server on a
 * loopback port 0 per member (the kv client's own transport reaches it, no production seam needed), each
 * answering its gateway requests with canned etcd JSON (kv-gateway-shapes.ts), recording every request,
 * and answering any request nobody registered with a 501 that `verify()` turns into a failed test.
 *
 * A member serves its version's gateway prefix (3.2 /v3alpha, 3.3 /v3beta, 3.4+ /v3) and /version; a
 * request under another prefix gets Go's 404 page, as a real member's mux answers it (the client finds
 * the prefix that way), and is recorded but not unexpected.
 */
export interface FakeMemberDef {
  name: string;
  /** The server version: its gateway prefix, its /version, its error shape. */
  version: string;
  /** The member id, decimal (as the gateway writes uint64s). */
  id: string;
  /** Answers by gateway path ('/kv/range') or by raw path ('/version'): a JSON body (200), a reply(), or a function of the request (or a promise of one: an answer that takes its time). */
  routes?: Record<string, Route>;
}

export interface Asked {
  member: string;
  method: string;
  /** The path after the member's gateway prefix ('/kv/range'), or the raw path outside it. */
  path: string;
  /** The request body, parsed. */
  body: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
  /** Which connection of the process brought it (numbered as the mock saw them open). */
  connection: number;
}

export interface Reply {
  readonly status: number;
  readonly body: unknown;
}
/** A JSON body (200), a reply(), or a function of the request giving one of those. */
export type Route = unknown;

/** An answer with an HTTP status (an error), its body as JSON, or as text when a string. */
export function reply(status: number, body: unknown): Reply {
  return Object.assign(Object.create(replyTag) as object, { status, body });
}
const replyTag = {};
const isReply = (v: unknown): v is Reply => typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === replyTag;

/** The gateway prefix a version serves. */
export function prefixOf(version: string): string {
  const minor = Number(version.split('.')[1]);
  return minor <= 2 ? '/v3alpha' : minor === 3 ? '/v3beta' : '/v3';
}

export interface FakeMember extends FakeMemberDef {
  url: string;
  /** host:port, as etcdctl names an endpoint. */
  hostPort: string;
  routes: Record<string, Route>;
}

export interface KvGateway {
  members: FakeMember[];
  member(name: string): FakeMember;
  /** Every member's client URL, comma-separated, for --endpoints. */
  endpoints: string;
  /** Every request, in the order the members got them (gateway-prefix probes of a wrong prefix left out). */
  asked: Asked[];
  /** `member path` of each request asked, e.g. 'etcd1 /kv/range'. */
  paths(): string[];
  /** Runs `opsctl kv ARGS --endpoints <every member>` in process (main(): flags, run, output, exit code). */
  kv(args: string[], opts?: { env?: NodeJS.ProcessEnv; stdin?: string; endpoints?: string }): Promise<RunResult>;
  /** Fails when a member was asked something no route answers. */
  verify(): void;
  close(): Promise<void>;
}

/** Starts one fake member per definition; close() in afterEach. */
export async function kvGateway(defs: FakeMemberDef[], configDir: string): Promise<KvGateway> {
  const asked: Asked[] = [];
  const unexpected: string[] = [];
  const servers: Server[] = [];
  const members: FakeMember[] = [];
  for (const def of defs) {
    const m = { ...def, routes: { ...def.routes } } as FakeMember;
    const server = createServer((req, res) => {
      void serve(m, req, res, asked, unexpected);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    m.url = `http://127.0.0.1:${port}`;
    m.hostPort = `127.0.0.1:${port}`;
    servers.push(server);
    members.push(m);
  }
  const endpoints = members.map((m) => m.url).join(',');
  return {
    members,
    endpoints,
    asked,
    member(name) {
      const m = members.find((x) => x.name === name);
      if (!m) throw new Error(`kv-gateway-mock: no member ${name}`);
      return m;
    },
    paths: () => asked.map((a) => `${a.member} ${a.path}`),
    kv: (args, opts = {}) =>
      runCli(['kv', ...args, '--endpoints', opts.endpoints ?? endpoints], {
        env: { OPSCTL_CONFIG_DIR: configDir, HOME: configDir, ...opts.env },
        stdin: opts.stdin,
        cwd: configDir,
      }),
    verify() {
      if (unexpected.length) throw new Error(`kv-gateway-mock: requests nobody answers:\n${unexpected.join('\n')}`);
    },
    async close() {
      for (const s of servers) s.closeAllConnections();
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    },
  };
}

const connections = new Map<object, number>();

async function serve(m: FakeMember, req: IncomingMessage, res: ServerResponse, asked: Asked[], unexpected: string[]): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const raw = Buffer.concat(chunks).toString('utf8');
  const url = new URL(req.url ?? '/', m.url);
  const prefix = prefixOf(m.version);
  const gateway = /^\/v3(alpha|beta)?\//.test(url.pathname);
  if (gateway && !url.pathname.startsWith(`${prefix}/`)) {
    // another version's prefix: the mux's own 404 (etcd's gateway is mounted on its prefix alone)
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('404 page not found\n');
    return;
  }
  const path = gateway ? url.pathname.slice(prefix.length) : url.pathname;
  let body: Record<string, unknown> = {};
  try {
    body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
  } catch {
    unexpected.push(`${m.name} ${req.method} ${url.pathname}: a body that is not JSON: ${raw}`);
  }
  let connection = connections.get(req.socket);
  if (connection === undefined) connections.set(req.socket, (connection = connections.size + 1));
  const a: Asked = { member: m.name, method: req.method ?? 'GET', path, body, headers: req.headers, connection };
  asked.push(a);
  const route = m.routes[path] ?? (path === '/version' ? { etcdserver: m.version, etcdcluster: `${m.version.split('.').slice(0, 2).join('.')}.0` } : undefined);
  if (route === undefined) {
    unexpected.push(`${m.name} ${req.method} ${url.pathname} ${raw}`);
    res.writeHead(501, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `kv-gateway-mock: ${m.name} has no answer for ${path}` }));
    return;
  }
  let answer: unknown;
  try {
    answer = typeof route === 'function' ? await (route as (x: Asked) => unknown)(a) : route;
  } catch (err) {
    unexpected.push(`${m.name} ${path}: the route threw: ${(err as Error).message}`);
    res.writeHead(500).end();
    return;
  }
  const r = isReply(answer) ? answer : { status: 200, body: answer };
  const text = typeof r.body === 'string' ? r.body : JSON.stringify(r.body);
  res.writeHead(r.status, { 'content-type': typeof r.body === 'string' ? 'text/plain; charset=utf-8' : 'application/json' }).end(text);
}

/**
 * The per-test lifecycle of a verb's unit test file: a fresh config directory, the members a test starts
 * (`start(defs)`), and after each test every request checked as answered and the servers closed.
 */
export function useKvGateway(hooks: {
  beforeEach: (fn: () => void) => void;
  afterEach: (fn: () => Promise<void>) => void;
}): (defs: FakeMemberDef[]) => Promise<KvGateway> {
  let dir: string | undefined;
  let gw: KvGateway | undefined;
  hooks.beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'opsctl-kvunit-'));
  });
  hooks.afterEach(async () => {
    try {
      gw?.verify();
    } finally {
      await gw?.close();
      gw = undefined;
      rmSync(dir!, { recursive: true, force: true });
    }
  });
  return async (defs) => {
    gw = await kvGateway(defs, dir!);
    return gw;
  };
}
