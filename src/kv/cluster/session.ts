import { readFileSync } from 'node:fs';
import type { Transport } from '../../core/http.js';
import type { KvConnection } from './connection.js';
import { NodeTransport, type NodeTransportOptions } from '../../core/node-transport.js';
import { WireTransport } from '../../core/wire-transport.js';

/**
 * How this command reaches one cluster: its connection settings (TLS, etcd user), its keep-alive
 * connections whose TLS options come from them (wire-transport.ts for the answers read whole, node-transport.ts
 * for the bodies read as they stream), the cluster's auth token and the gateway prefix each member serves.
 * Made once per command by the verb that resolved the cluster and passed to every kv client, so nothing
 * about a cluster lives in a module.
 */
export class KvSession {
  /** Bodies read as they stream (a watch, a snapshot): node:http. */
  private pool?: NodeTransport;
  /** Every answer read whole (the gateway's calls, /version): HTTP/1.1 on a socket of its own (core/wire-transport.ts). */
  private wire?: WireTransport;
  private send?: Transport;
  private transportOptions?: NodeTransportOptions;
  /** The cluster's auth token, asked once however many requests wait for it ('' = auth is off). */
  private token?: Promise<string>;
  /** The gateway prefix each endpoint serves, as learnt from its answers. */
  readonly prefixes = new Map<string, string>();
  /**
   * The last TLS error a connection to each host:port failed with. A member that refuses the client
   * certificate (TLS 1.3) sends its alert after the handshake: the socket reports it, and the request
   * may fail with only a reset. The client looks here to name the real cause.
   */
  private readonly tlsErrors = new Map<string, { err: NodeJS.ErrnoException; at: number }>();

  constructor(readonly conn: KvConnection = {}) {}

  /** What carries every request of this session (TLS material read once, here). */
  transport(): Transport {
    this.send ??= (url, req) => {
      if (!req.stream) return (this.wire ??= new WireTransport(this.options())).send(url, req);
      return (this.pool ??= new NodeTransport(this.options())).send(url, req);
    };
    return this.send;
  }

  private options(): NodeTransportOptions {
    if (!this.transportOptions) {
      const t = this.conn.tls;
      this.transportOptions = {
        tls: t
          ? {
              ca: t.cacert ? readFileSync(t.cacert) : undefined,
              cert: t.cert ? readFileSync(t.cert) : undefined,
              key: t.key ? readFileSync(t.key) : undefined,
              rejectUnauthorized: !t.insecureSkipVerify,
            }
          : undefined,
        dialMs: this.conn.dialTimeoutMs,
        onSocketError: (hostPort, err) => this.noteTlsError(hostPort, err),
      };
    }
    return this.transportOptions;
  }

  private noteTlsError(key: string, err: Error): void {
    const e = err as NodeJS.ErrnoException;
    if (/^ERR_SSL_|^ERR_TLS_|^ERR_OSSL_|CERT|^EPROTO$/.test(e.code ?? '')) this.tlsErrors.set(key, { err: e, at: monotonicMs() });
  }

  /** The TLS error a connection to this endpoint failed with since `since` (monotonicMs()), if any. */
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

  /** Closes the pool (at the end of the command, every request answered or given up). */
  close(): Promise<void> {
    this.pool?.close();
    this.pool = undefined;
    this.wire?.close();
    this.wire = undefined;
    return Promise.resolve();
  }
}

/**
 * A monotonic clock in milliseconds, from process.hrtime: the global `performance` would load Node's
 * perf_hooks (nine built-in modules) into every kv verb for one timestamp a request.
 */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
