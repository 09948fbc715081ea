import { readFileSync } from 'node:fs';
import { Agent, buildConnector } from '../../core/undici-lite.js';
import type { KvConnection } from './connection.js';

/**
 * How this command reaches one cluster: its connection settings (TLS, etcd user), one keep-alive
 * undici pool whose TLS options come from them, the cluster's auth token and the gateway prefix each
 * member serves. Made once per command by the verb that resolved the cluster and passed to every
 * kv client, so nothing about a cluster lives in a module.
 */
export class KvSession {
  private agent?: Agent;
  /** The cluster's auth token, asked once however many requests wait for it ('' = auth is off). */
  private token?: Promise<string>;
  /** The gateway prefix each endpoint serves, as learnt from its answers. */
  readonly prefixes = new Map<string, string>();
  /**
   * The last TLS error a connection to each host:port failed with. A member that refuses the client
   * certificate (TLS 1.3) sends its alert after the handshake: the socket reports it, but the
   * request fails with undici's "other side closed". The client looks here to name the real cause.
   */
  private readonly tlsErrors = new Map<string, { err: NodeJS.ErrnoException; at: number }>();

  constructor(readonly conn: KvConnection = {}) {}

  /** The pool every request of this session goes through (TLS material read once, here). */
  dispatcher(): Agent {
    if (!this.agent) {
      const t = this.conn.tls;
      const connect = t
        ? {
            ca: t.cacert ? readFileSync(t.cacert) : undefined,
            cert: t.cert ? readFileSync(t.cert) : undefined,
            key: t.key ? readFileSync(t.key) : undefined,
            rejectUnauthorized: !t.insecureSkipVerify,
          }
        : undefined;
      // A poll of the cluster is 3 requests per member: keep the connections. Idle sockets do not
      // hold the process (undici unrefs them).
      const base = buildConnector({ ...connect });
      const wrapped: typeof base = (opts, cb) =>
        base(opts, (err, socket) => {
          const key = `${opts.hostname}:${opts.port}`;
          if (err) this.noteTlsError(key, err);
          socket?.on('error', (e: Error) => this.noteTlsError(key, e));
          // undici's callback types differ by outcome; pass on what came.
          (cb as (e: Error | null, s: typeof socket) => void)(err, socket);
        });
      this.agent = new Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000, connections: 16, connect: wrapped });
    }
    return this.agent;
  }

  private noteTlsError(key: string, err: Error): void {
    const e = err as NodeJS.ErrnoException;
    if (/^ERR_SSL_|^ERR_TLS_|^ERR_OSSL_|CERT|^EPROTO$/.test(e.code ?? '')) this.tlsErrors.set(key, { err: e, at: performance.now() });
  }

  /** The TLS error a connection to this endpoint failed with since `since` (performance.now()), if any. */
  tlsErrorSince(endpoint: string, since: number): NodeJS.ErrnoException | undefined {
    const u = new URL(endpoint);
    const hit = this.tlsErrors.get(`${u.hostname}:${u.port || (u.protocol === 'https:' ? '443' : '80')}`);
    return hit && hit.at >= since ? hit.err : undefined;
  }

  authToken(): Promise<string> | undefined {
    return this.token;
  }

  setAuthToken(t: Promise<string>): void {
    this.token = t;
    t.catch(() => {
      if (this.token === t) this.token = undefined;
    });
  }

  forgetToken(): void {
    this.token = undefined;
  }

  /** Closes the pool (at the end of the command); destroys it after an interrupt. */
  async close(interrupted = false): Promise<void> {
    const a = this.agent;
    this.agent = undefined;
    await (interrupted ? a?.destroy() : a?.close());
  }
}
