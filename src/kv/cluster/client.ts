import { HttpClient, type HttpResponse } from '../../core/http.js';
import { NetworkError, OpsError } from '../../core/errors.js';
import { KvSession, monotonicMs } from './session.js';
import {
  parseAlarms,
  parseHealth,
  parseJsonSafe,
  asList,
  asObject,
  field,
  textOf,
  parseMemberList,
  parseStatus,
  parseVersion,
  gatewayPrefixFor,
  snapshotsSavedOf,
  type AlarmEntry,
  type HealthResult,
  type MemberListEntry,
  type StatusResult,
  type VersionResult,
} from './parse.js';
import { CN_REFUSED, GatewayError, RedirectRefused, authRefusal, gatewayError, gatewayMessage, noGateway, signInTimeout } from './gateway-errors.js';
import { AUTH_ERRORS, ConsumeFailed, isNetworkish, REDIRECTS, unreachable, withoutCredentials } from './transport-rules.js';

/** The gateway prefixes, newest first: /v3 (3.4+), /v3beta (3.3), /v3alpha (3.2). */
export const GATEWAY_PREFIXES = ['/v3', '/v3beta', '/v3alpha'] as const;

export interface KvClientOptions {
  timeoutMs?: number;
  debug?: (line: string) => void;
  /** The cluster's connection (TLS, auth, pool): required, so no request can leave without the cluster's TLS. */
  session: KvSession;
  /** Each request may follow this client's others on their connection, before their answers (HTTP/1.1 pipelining). */
  pipeline?: boolean;
}

/**
 * HTTP to one member's client URL: /health, /version and the v3 JSON gateway, discovering which
 * gateway prefix the member serves (3.4 /v3, 3.3 /v3beta, 3.2 /v3alpha). Every request goes through
 * the one HTTP client of opsctl (core/http.ts) on the session's pool, with one deadline for the
 * whole exchange (timeoutMs, body included).
 */
export class KvClient {
  private prefix?: string;
  /** The status answer that discovery got: the next status() uses it instead of asking again. */
  private discoveredStatus?: string;
  readonly timeoutMs: number;
  readonly session: KvSession;
  private readonly http: HttpClient;

  constructor(
    readonly endpoint: string,
    private readonly opts: KvClientOptions = { session: new KvSession() },
  ) {
    this.timeoutMs = opts.timeoutMs ?? 5000;
    this.session = opts.session;
    this.http = new HttpClient({
      service: 'kv',
      baseUrl: endpoint,
      transport: this.session.transport(),
      timeoutMs: this.timeoutMs,
      // One retry, at once, when a kept-alive connection was closed under a read; a refused or
      // silent member is reported within the deadline, not waited on.
      maxAttempts: 2,
      retryStaleOnly: true,
      debug: opts.debug,
    });
  }

  private get prefixCache(): Map<string, string> {
    return this.session.prefixes;
  }

  private async fetch(
    path: string,
    init: {
      method?: 'GET' | 'POST';
      body?: unknown;
      headers?: Record<string, string>;
      timeoutMs?: number;
      consume?: (body: AsyncIterable<Uint8Array>) => Promise<void>;
      /** A gateway call (its path after the prefix): a redirect to the same call under another prefix is returned, not refused. */
      gatewayPath?: string;
    } = {},
  ): Promise<{ status: number; text: string; url: string }> {
    const url = `${this.endpoint}${path}`;
    let res: HttpResponse<string>;
    const timeoutMs = init.timeoutMs ?? this.timeoutMs;
    const sent = monotonicMs();
    try {
      res = await this.followSafely(
        url,
        init.method ?? 'GET',
        (to, headers) =>
          this.http.request<string>({
            method: init.method ?? 'GET',
            path: to,
            json: init.body,
            headers,
            auth: false,
            text: true,
            anyStatus: true,
            // Redirects are judged here (followSafely), never followed by the HTTP layer.
            followRedirects: false,
            // Everything but a put only reads.
            idempotent: !path.endsWith('/kv/put'),
            timeoutMs,
            consume: init.consume,
            pipeline: this.opts.pipeline,
          }),
        init.headers,
        init.gatewayPath,
      );
    } catch (err) {
      if (err instanceof RedirectRefused) throw err;
      // The body's reader failed on its own (a full disk, a broken stream): that error, not "unreachable".
      if (err instanceof ConsumeFailed) throw err.cause;
      const raw = (err instanceof NetworkError ? err.cause : err) as NodeJS.ErrnoException;
      // A connection closed after a TLS alert: the alert is the cause.
      const cause = ((raw?.code === 'UND_ERR_SOCKET' || raw?.code === 'ECONNRESET') && this.session.tlsErrorSince(this.endpoint, sent)) || raw;
      throw unreachable(this.endpoint, cause, { timeoutMs, hasClientCert: Boolean(this.session.conn.tls?.cert) });
    }
    const redirected = res.url !== url;
    this.opts.debug?.(`[kv] ${init.method ?? 'GET'} ${url} → ${res.status}${redirected ? ` (via ${res.url})` : ''}`);
    const text = res.data ?? '';
    if (res.status === 400 && /HTTP request to an HTTPS server/i.test(text)) {
      throw new OpsError(`${this.endpoint}: the member serves TLS on this port`, 1, {
        code: 'tls_required',
        hint: `write the endpoint as https://${new URL(this.endpoint).host} (with --cacert, and --cert/--key if the members ask for a client certificate)`,
      });
    }
    return { status: res.status, text, url: res.url };
  }

  /**
   * Whether the member serves: it knows a leader (its status) and a quorum read goes through (quorumRead).
   * Never /health: on 3.2 to 3.4 (and 3.5 with the v2 API on) it proposes a v2 QGET through raft,
   * which the WAL keeps and 3.6 refuses to replay ("detected custom v2 content in WAL records"):
   * opsctl's own polling would make the content it then has to clean up.
   */
  async health(): Promise<HealthResult> {
    const st = await this.status();
    if (!st.leaderId || st.leaderId === '0') return { healthy: false, detail: 'no leader' };
    return this.quorumRead();
  }

  /**
   * A linearizable read of one key (count only), as etcdctl endpoint health does: etcd confirms it with
   * a quorum of the leader's heartbeats (ReadIndex) and proposes nothing, so nothing is written to the
   * raft log of any version. A read refused by auth still shows the member answering (etcdctl counts
   * it healthy too). Asked only of a member that knows a leader (its status), the read waits for the
   * leader's confirmation and the member's apply: up to the request timeout, like any request.
   */
  async quorumRead(timeoutMs = this.timeoutMs): Promise<HealthResult> {
    try {
      await this.gateway('/kv/range', { key: HEALTH_KEY, count_only: true }, timeoutMs);
      return { healthy: true, detail: 'healthy' };
    } catch (err) {
      // (A refused read, not refused credentials: a wrong password is the operator's to hear about.)
      if (err instanceof OpsError && err.code === 'auth_required')
        return { healthy: true, detail: `healthy (the read was refused by auth: ${err.message.split(': ').pop()})` };
      if (err instanceof GatewayError) return { healthy: false, detail: `quorum read failed: ${err.serverMessage}` };
      if (err instanceof NetworkError && /no complete answer/.test(err.message)) return { healthy: false, detail: `no quorum read within ${timeoutMs} ms` };
      throw err;
    }
  }

  /** The raw /health of the member: shapes only (etcd-versions tests). opsctl's checks use health(). */
  async httpHealth(): Promise<HealthResult> {
    const r = await this.fetch('/health');
    return parseHealth(r.status, r.text);
  }

  async version(): Promise<VersionResult> {
    const r = await this.fetch('/version');
    if (r.status !== 200) throw new OpsError(`${this.endpoint}/version: HTTP ${r.status}`, 1, { hint: 'is this an etcd client URL?' });
    const v = parseVersion(r.text);
    // The server version tells the gateway prefix (3.2 /v3alpha, 3.3 /v3beta, 3.4+ /v3): a guess that spares the discovery
    // round trip (a 404 later discovers it for real), refreshed on every answer: a member restarted on another version
    // serves another prefix, and a stale one costs a redirect (3.3 sends /v3alpha to /v3beta) on every request.
    const guess = gatewayPrefixFor(v.server);
    if (guess && this.prefixCache.get(this.endpoint) !== guess) {
      this.prefixCache.set(this.endpoint, guess);
      this.prefix = undefined;
    }
    return v;
  }

  /**
   * The gateway prefix this member serves, found by trying the newest first and remembered per
   * endpoint for the life of the process (a 404 later forgets it: the member was up- or downgraded).
   */
  async gatewayPrefix(): Promise<string> {
    this.prefix ??= this.prefixCache.get(this.endpoint);
    if (this.prefix) return this.prefix;
    // One discovery per client, however many calls wait for it.
    this.discovering ??= this.discover().finally(() => (this.discovering = undefined));
    return this.discovering;
  }

  private discovering?: Promise<string>;

  /** Whether this member's gateway prefix is already known (from an earlier answer in this process). */
  knowsPrefix(): boolean {
    return Boolean(this.prefix ?? this.prefixCache.get(this.endpoint));
  }

  private async discover(): Promise<string> {
    // All three at once (a read-only call), the newest that answers wins: one round trip, not three.
    const tries = await Promise.all(
      GATEWAY_PREFIXES.map((p) =>
        this.fetch(`${p}/maintenance/status`, { method: 'POST', body: {}, gatewayPath: '/maintenance/status' }).catch((err: unknown) => err as Error),
      ),
    );
    type Answer = { status: number; text: string; url: string };
    // 3.6 asks for a user even for the status when auth is on: a refusal in etcd's words is the gateway too
    const hit =
      tries.find((r): r is Answer => !(r instanceof Error) && r.status === 200) ??
      tries.find((r): r is Answer => !(r instanceof Error) && AUTH_ERRORS.test(gatewayMessage(r.text)));
    if (hit) {
      if (hit.status === 200) this.discoveredStatus = hit.text;
      this.prefix = new URL(hit.url).pathname.replace(/\/maintenance\/status$/, '');
      this.prefixCache.set(this.endpoint, this.prefix);
      return this.prefix;
    }
    const failure = tries.find((r) => r instanceof Error);
    if (failure) throw failure;
    // etcd 3.4+ refuses every gateway call from a certificate with a CN: say that, not "no gateway".
    const cn = tries.find((r): r is Answer => !(r instanceof Error) && CN_REFUSED.test(gatewayMessage(r.text)));
    if (cn) throw gatewayError(this.endpoint, cn.status, gatewayMessage(cn.text));
    // (a peer URL answers /version but no gateway: said as such, with the client URL to give)
    throw await noGateway(this.endpoint, GATEWAY_PREFIXES, (path) => this.fetch(path));
  }

  /**
   * The auth token for --user (the gateway takes `Authorization: <token>` from 3.3; 3.2's ignores it). One token for the
   * cluster (etcd replicates simple tokens to every member), asked for once and again when a member says it is invalid
   * (a restarted member forgets them). Undefined without --user or when auth is off on the cluster.
   */
  private async token({ fresh = false }: { fresh?: boolean } = {}): Promise<string | undefined> {
    const auth = this.session.conn.auth;
    if (!auth) return undefined;
    let t = fresh ? undefined : this.session.authToken();
    if (!t) {
      t = this.authenticate(auth);
      this.session.setAuthToken(t);
    }
    return (await t) || undefined;
  }

  private async authenticate(auth: { user: string; password: string }): Promise<string> {
    const prefix = await this.gatewayPrefix();
    const r = await this.fetch(`${prefix}/auth/authenticate`, { method: 'POST', body: { name: auth.user, password: auth.password } }).catch((err: unknown) => {
      throw signInTimeout(err, this.endpoint, auth.user, this.timeoutMs);
    });
    if (r.status === 200) return textOf(asObject(parseJsonSafe(r.text)).token) ?? '';
    const msg = gatewayMessage(r.text);
    if (/authentication is not enabled/i.test(msg)) return '';
    if (/authentication failed|invalid user ID or password/i.test(msg)) {
      throw new OpsError(`${this.endpoint}: etcd refused user ${auth.user}: wrong user name or password`, 4, {
        code: 'auth_failed',
        hint: 'check --user and the password (prompt, OPSCTL_KV_PASSWORD or --password-file)',
      });
    }
    throw gatewayError(this.endpoint, r.status, msg);
  }

  /**
   * Whether auth is enabled on the cluster: a range without a token is refused then ("user name is
   * empty"); undefined when the member does not say.
   */
  async authEnabled(): Promise<boolean | undefined> {
    const prefix = await this.gatewayPrefix();
    const r = await this.fetch(`${prefix}/kv/range`, {
      method: 'POST',
      body: { key: Buffer.from('\0opsctl-auth-probe').toString('base64'), count_only: true },
    });
    if (r.status === 200) return false;
    return AUTH_ERRORS.test(gatewayMessage(r.text)) ? true : undefined;
  }

  /**
   * One call; an unknown member is asked under /v3 (3.4+) first: 3.2/3.3 answer 404 (nothing done) and are
   * asked again under the prefix their /version named meanwhile (a pipelining client), else one a discovery finds.
   */
  async gateway(path: string, body: unknown, timeoutMs?: number): Promise<string> {
    let token = await this.token();
    const known = this.prefix ?? this.prefixCache.get(this.endpoint);
    const prefix = known ?? GATEWAY_PREFIXES[0];
    const send = (p: string) =>
      this.fetch(`${p}${path}`, {
        method: 'POST',
        body,
        headers: token ? { authorization: token } : undefined,
        gatewayPath: path,
        ...(timeoutMs ? { timeoutMs } : {}),
      });
    let r = await send(prefix);
    if (token && r.status !== 200 && /invalid auth token/i.test(gatewayMessage(r.text))) {
      this.session.forgetToken();
      token = await this.token({ fresh: true });
      r = await send(prefix);
    }
    const learnt = this.prefix ?? this.prefixCache.get(this.endpoint);
    if (!known && learnt && learnt !== prefix && (r.status === 404 || REDIRECTS.has(r.status))) {
      // guessed while the member's /version was on its way: it named the member's prefix since
      r = await send(learnt);
    } else if ((r.status === 404 && !/^etcdserver: /.test(gatewayMessage(r.text))) || REDIRECTS.has(r.status)) {
      // Not this path (etcd's own NotFound says "etcdserver: …"): the member runs another version: find its prefix
      // again (the status answer the discovery got is not kept: a later status() must not read an old one).
      this.prefixCache.delete(this.endpoint);
      this.prefix = undefined;
      const again = await this.gatewayPrefix();
      this.discoveredStatus = undefined;
      r = await send(again);
    }
    if (r.status === 200 && (!known || !r.url.endsWith(`${prefix}${path}`))) {
      // The prefix guessed, or found again (after a 404 or a redirect to another prefix): remember it.
      const real = new URL(r.url).pathname.slice(0, -path.length);
      if (real) {
        this.prefixCache.set(this.endpoint, real);
        this.prefix = real;
      }
    }
    if (r.status !== 200) {
      const msg = gatewayMessage(r.text);
      if (AUTH_ERRORS.test(msg)) throw authRefusal(this.endpoint, msg, this.session.conn.auth?.user, this.prefix ?? prefix);
      throw gatewayError(this.endpoint, r.status, msg);
    }
    return r.text;
  }

  /** etcd 3.5+'s peer handler GET /downgrade/enabled, asked of a client made for a member's peer URL: whether a downgrade is enabled. */
  async downgradeEnabled(): Promise<boolean | undefined> {
    const r = await this.fetch('/downgrade/enabled');
    const t = r.text.trim();
    return r.status === 200 && (t === 'true' || t === 'false') ? t === 'true' : undefined;
  }

  /** The member's status (a pipelining client: under the prefix known or guessed, as gateway() asks, no discovery). */
  async status(): Promise<StatusResult> {
    if (this.opts.pipeline && !this.discoveredStatus) return parseStatus(await this.gateway('/maintenance/status', {}));
    await this.gatewayPrefix();
    const fresh = this.discoveredStatus;
    this.discoveredStatus = undefined;
    return parseStatus(fresh ?? (await this.gateway('/maintenance/status', {})));
  }

  /**
   * HashKV at `revision`, as the simulated members answer it on their gateway (real etcd's gateway
   * routes /maintenance/hash to Hash, of the whole db: hashkv.ts asks real members with etcdctl).
   */
  async hashKv(revision: string): Promise<string> {
    const r = asObject(parseJsonSafe(await this.gateway('/maintenance/hashkv', { revision })));
    const h = textOf(r.hash);
    if (h === undefined) throw new Error(`${this.endpoint}: HashKV answered no hash`);
    return h;
  }

  /** Maintenance Defragment of this member (its own db file only; it blocks the member's reads and writes while it runs). */
  async defragment(): Promise<void> {
    await this.gateway('/maintenance/defragment', {});
  }

  async members(): Promise<MemberListEntry[]> {
    return parseMemberList(await this.gateway('/cluster/member/list', {}));
  }

  /** Raft snapshots the member saved since it started (its /metrics: parse.ts snapshotsSavedOf); undefined when they do not say. */
  async snapshotsSaved(): Promise<number | undefined> {
    const r = await this.fetch('/metrics');
    return r.status === 200 ? snapshotsSavedOf(r.text) : undefined;
  }

  async alarms(): Promise<AlarmEntry[]> {
    return parseAlarms(await this.gateway('/maintenance/alarm', { action: 'GET' }));
  }

  async put(key: string, value: string | Buffer): Promise<{ revision: string }> {
    const body = { key: Buffer.from(key).toString('base64'), value: Buffer.from(value).toString('base64') };
    const r = asObject(parseJsonSafe(await this.gateway('/kv/put', body)));
    return { revision: textOf(asObject(r.header).revision) ?? '' };
  }

  async get(key: string): Promise<{ key: string; value: string; modRevision: string; version: string } | undefined> {
    const kv = asList(asObject(parseJsonSafe(await this.gateway('/kv/range', { key: Buffer.from(key).toString('base64') }))).kvs).map(asObject)[0];
    if (!kv) return undefined;
    const value = Buffer.from(textOf(kv.value) ?? '', 'base64').toString('utf8');
    return { key, value, modRevision: textOf(field(kv, 'mod_revision', 'modRevision')) ?? '', version: textOf(kv.version) ?? '' };
  }

  /** Every key under a prefix (range end = prefix + 1). */
  async list(prefixKey: string): Promise<Array<{ key: string; value: string }>> {
    const start = Buffer.from(prefixKey);
    const end = Buffer.from(start);
    // The last byte plus one (an empty prefix has no last byte: the range end stays empty, as before).
    const last = end.at(-1);
    if (last !== undefined) end[end.length - 1] = last + 1;
    const r = asObject(parseJsonSafe(await this.gateway('/kv/range', { key: start.toString('base64'), range_end: end.toString('base64') })));
    return asList(r.kvs)
      .map(asObject)
      .map((kv) => ({ key: Buffer.from(textOf(kv.key) ?? '', 'base64').toString(), value: Buffer.from(textOf(kv.value) ?? '', 'base64').toString() }));
  }

  /**
   * The v2 store's size: the bytes of its key tree as JSON (GET /v2/keys/?recursive=true, as etcd writes it
   * into snapshots; 3.2/3.3 expose no other measure), read up to `limit` (beyond: `over`). Undefined, with
   * the reason, when the member serves no v2 API or refuses the read.
   */
  async v2DataBytes(limit: number): Promise<{ bytes: number; over: boolean } | { bytes: undefined; why: string }> {
    const url = `${this.endpoint}/v2/keys/?recursive=true&sorted=false`;
    const t0 = monotonicMs();
    let r: HttpResponse<string>;
    try {
      r = await this.followSafely(url, 'GET', (to) =>
        this.http.request<string>({ method: 'GET', path: to, auth: false, text: true, anyStatus: true, maxBodyBytes: limit }),
      );
    } catch (err) {
      return { bytes: undefined, why: `${url}: ${(err as Error).message}` };
    }
    this.opts.debug?.(`[kv] GET ${url} → ${r.status}, ${r.bytes} bytes${r.truncated ? ' (stopped there)' : ''} in ${Math.round(monotonicMs() - t0)} ms`);
    if (r.status === 404 && !/"errorCode"/.test(r.data ?? '')) return { bytes: undefined, why: `${this.endpoint} serves no v2 API (HTTP 404)` };
    // errorCode 100: key not found, i.e. an empty v2 store.
    if (r.status === 404) return { bytes: 0, over: false };
    if (r.status !== 200) return { bytes: undefined, why: `${url}: HTTP ${r.status}` };
    return { bytes: r.bytes ?? 0, over: Boolean(r.truncated) };
  }

  /**
   * Sends one request and judges each redirect: same origin only, GET/HEAD only (a POST is never sent
   * again), at most 5, no credential header (etcd's token) on the next hop. Anything else is refused
   * naming the member, the status and the Location, before anything is sent there.
   */
  private async followSafely(
    url: string,
    method: string,
    send: (url: string, headers: Record<string, string> | undefined) => Promise<HttpResponse<string>>,
    headers?: Record<string, string>,
    gatewayPath?: string,
  ): Promise<HttpResponse<string>> {
    let at = url;
    let hdrs = headers;
    for (let hop = 0; ; hop++) {
      const res = await send(at, hdrs);
      if (!REDIRECTS.has(res.status)) return hop ? { ...res, url: at } : res;
      const raw = res.headers.location;
      const location = Array.isArray(raw) ? raw[0] : raw;
      if (!location) return res;
      let next: URL;
      try {
        next = new URL(location, at);
      } catch {
        throw new RedirectRefused(this.endpoint, res.status, location, 'the Location is not a URL');
      }
      if (next.origin !== new URL(at).origin) throw new RedirectRefused(this.endpoint, res.status, location, `it leads to another origin (${next.origin})`);
      if (method !== 'GET' && method !== 'HEAD') {
        // The member serves the call under another gateway prefix (a simulated 3.3 sends /v3alpha to
        // /v3beta): returned as it is; gateway() finds the prefix again, as after a 404.
        if (gatewayPath && GATEWAY_PREFIXES.some((p) => next.pathname === `${p}${gatewayPath}`)) return res;
        throw new RedirectRefused(this.endpoint, res.status, location, `a ${method} is never sent again on a redirect`);
      }
      if (hop >= 4) throw new RedirectRefused(this.endpoint, res.status, location, 'more than 5 redirects');
      at = next.toString();
      hdrs = withoutCredentials(hdrs);
    }
  }

  /**
   * A streamed gateway call (POST of an empty body to PATH under the member's prefix), its body handed
   * to READ as it arrives: memory stays what READ keeps. READ's own errors are thrown as they are; the
   * network's while reading say the member is unreachable, as any request's.
   */
  async gatewayStream(path: string, read: (body: AsyncIterable<Uint8Array>) => Promise<void>, timeoutMs: number, body: unknown = {}): Promise<void> {
    const token = await this.token();
    const prefix = await this.gatewayPrefix();
    const r = await this.fetch(`${prefix}${path}`, {
      method: 'POST',
      body,
      headers: token ? { authorization: token } : undefined,
      timeoutMs,
      consume: async (body) => {
        try {
          await read(body);
        } catch (err) {
          // A network error while reading stays one (the HTTP layer says so); the reader's are its own.
          if (isNetworkish(err)) throw err;
          throw new ConsumeFailed(err);
        }
      },
    });
    if (r.status !== 200) {
      const msg = gatewayMessage(r.text);
      throw AUTH_ERRORS.test(msg) ? authRefusal(this.endpoint, msg, this.session.conn.auth?.user, prefix) : gatewayError(this.endpoint, r.status, msg);
    }
  }
}

/** The key a health check reads (etcdctl endpoint health's own: "health"), base64 for the gateway. */
const HEALTH_KEY = Buffer.from('health').toString('base64');
