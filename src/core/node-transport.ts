/**
 * A transport of HttpClient (http.ts) on Node's own HTTP client (node:http, node:https with a TLS
 * client's settings), one keep-alive pool per scheme: what carries the kv client's requests whose body
 * is read as it streams (a watch, a snapshot; its session, kv/cluster/session.ts: the answers read whole
 * go over wire-transport.ts). HttpClient keeps every rule of the one HTTP stack above it (the
 * deadline of the whole exchange, the retry of a stale connection, redaction). Not undici, as the other
 * services use: a kv verb is a command an operator runs in loops, and undici's code, its WebAssembly
 * HTTP parser and the built-ins it loads cost a kv verb more CPU than the verb's whole work (node:http's
 * parser is built into Node); see docs/development.md, "kv verbs: start-up".
 */
import type { Agent as HttpAgent, ClientRequest, IncomingMessage, RequestOptions } from 'node:http';
import type { Socket } from 'node:net';
import type { Transport, TransportResponse } from './http.js';

export interface NodeTransportOptions {
  /** TLS client settings of https:// members (the files already read). */
  tls?: { ca?: Buffer; cert?: Buffer; key?: Buffer; rejectUnauthorized: boolean };
  /** The longest a connection may take to be made (etcdctl's --dial-timeout); without it, the request's deadline alone. */
  dialMs?: number;
  /** Every error a socket reports, by host:port: a member that refuses the client certificate says so after the handshake. */
  onSocketError?: (hostPort: string, err: Error) => void;
}

/** The error of a connection not made within the dial timeout. */
export class DialTimeout extends Error {
  readonly code = 'DIAL_TIMEOUT';
  constructor(ms: number) {
    super(`no connection within ${ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`} (--dial-timeout)`);
  }
}

type Pool = { request: (url: URL, opts: RequestOptions) => ClientRequest; agent: HttpAgent };

export class NodeTransport {
  private plain?: Pool;
  private secure?: Pool;
  /** Sockets whose errors are already reported (a kept-alive socket carries many requests). */
  private readonly watched = new WeakSet<Socket>();

  constructor(private readonly opts: NodeTransportOptions = {}) {}

  private pool({ secure }: { secure: boolean }): Pool {
    if (secure) {
      if (!this.secure) {
        const https = process.getBuiltinModule('node:https');
        const t = this.opts.tls;
        const agent = new https.Agent({
          keepAlive: true,
          maxSockets: 16,
          ca: t?.ca,
          cert: t?.cert,
          key: t?.key,
          rejectUnauthorized: t?.rejectUnauthorized ?? true,
        });
        this.secure = { request: (url, o) => https.request(url, o), agent };
      }
      return this.secure;
    }
    if (!this.plain) {
      const http = process.getBuiltinModule('node:http');
      // idle sockets of a keep-alive agent are unref'd by Node: they never hold the process
      this.plain = { request: (url, o) => http.request(url, o), agent: new http.Agent({ keepAlive: true, maxSockets: 16 }) };
    }
    return this.plain;
  }

  /** One request: resolves with the status and headers, the body still to read. */
  readonly send: Transport = (url, req) =>
    new Promise<TransportResponse>((resolve, reject) => {
      if (req.body !== undefined && typeof req.body !== 'string') {
        reject(new Error('the kv transport sends JSON bodies only'));
        return;
      }
      const secure = url.protocol === 'https:';
      const { request, agent } = this.pool({ secure });
      const hostPort = `${url.hostname}:${url.port || (secure ? '443' : '80')}`;
      const headers = { ...req.headers, ...(req.body !== undefined ? { 'content-length': String(Buffer.byteLength(req.body)) } : {}) };
      const r = request(url, { method: req.method, headers, agent, signal: req.signal });
      r.on('socket', (socket: Socket) => {
        if (!this.watched.has(socket)) {
          this.watched.add(socket);
          socket.on('error', (err) => this.opts.onSocketError?.(hostPort, err));
        }
        const dialMs = this.opts.dialMs;
        if (dialMs === undefined || !socket.connecting) return;
        const timer = setTimeout(() => r.destroy(new DialTimeout(dialMs)), dialMs);
        const done = () => clearTimeout(timer);
        socket.once(secure ? 'secureConnect' : 'connect', done);
        socket.once('close', done);
      });
      r.on('error', reject);
      r.on('response', (res: IncomingMessage) => resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: withText(res) }));
      r.end(req.body);
    });

  /** Closes the pools (the end of the command): idle sockets go; after an interrupt, busy ones too. */
  close(): void {
    this.plain?.agent.destroy();
    this.secure?.agent.destroy();
    this.plain = undefined;
    this.secure = undefined;
  }
}

/** A response body as HttpClient reads it: chunks as they come, or all of it as text. */
function withText(res: IncomingMessage): TransportResponse['body'] {
  return Object.assign(res, {
    // listeners, not `for await`: the stream's async iterator is code a kv verb would compile for this alone
    text(): Promise<string> {
      return new Promise<string>((resolve, reject) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
        res.once('error', reject);
        // a response cut off before its end (the socket closed, the deadline's abort)
        res.once('close', () => {
          if (!res.complete) reject(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
        });
      });
    },
  });
}
