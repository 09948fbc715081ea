import type { Dispatcher, FormData } from 'undici';
import { sleep as abortableSleep } from './sleep.js';
import type { Agent } from './undici-lite.js';
import { ApiError, InterruptedError, NetworkError, type OpsError, UsageError } from './errors.js';
import type { RequestPacer } from './pacer.js';
import { isLoopbackHost, redactBody, redactHeaders, redactUrl } from './redact.js';
import { type AnswerBody, discard, parseBody, readBody, rearming, requestBody, serverMessage, truncate, tryJson } from './http-body.js';
import { backoffMs, HTTP_BACKOFF, IDEMPOTENT_METHODS, isStaleConnection, RETRY_STATUSES, retryAfterMs } from './retry.js';
import { abortOf, type AbortView, DeadlineError, formatMs, LazyAbort } from './lazy-abort.js';

export type Query = Record<string, string | number | boolean | undefined | null | Array<string | number>>;

export interface RequestOptions {
  method?: Dispatcher.HttpMethod;
  /** Appended to the base URL (which may carry a path prefix). An absolute URL is used as it is. */
  path: string;
  query?: Query;
  /** JSON body. */
  json?: unknown;
  /** application/x-www-form-urlencoded body (a list: the field repeated, in order). */
  form?: Record<string, string | string[] | undefined>;
  /** multipart/form-data body. */
  formData?: FormData;
  headers?: Record<string, string>;
  /** Send credentials (default true). */
  auth?: boolean;
  /** Do not throw on these statuses; return them. */
  okStatuses?: number[];
  /**
   * Follow up to 5 redirects: 307/308 keep the method and body, 303 (and 301/302 after a POST) go on as a GET
   * without one, as fetch does; credentials go to the request's own origin only.
   */
  followRedirects?: boolean;
  /** The body as text, unparsed. */
  text?: boolean;
  /** Return every status as it is: no error for 4xx/5xx, no retry on 429/5xx (the caller reads it). */
  anyStatus?: boolean;
  /** Whether the request may be sent again after a network error (default: by its method). */
  idempotent?: boolean;
  /** This request's deadline instead of the client's. */
  timeoutMs?: number;
  /** Read at most this many bytes of the body, then close it (the response says `truncated`). */
  maxBodyBytes?: number;
  /**
   * Reads a 2xx body as it streams (any size, constant memory) instead of buffering it; the response's
   * data is then empty. Its own errors are thrown as they are, never retried.
   */
  consume?: (body: AsyncIterable<Uint8Array>, head: { status: number; headers: HttpResponse['headers'] }) => Promise<void>;
  /**
   * What the deadline (timeoutMs) bounds: the whole exchange (default), or with consume each wait, for the
   * answer's head and then for each piece of its body: a download takes as long as its size needs, but a
   * server that stops sending ends it.
   */
  deadline?: 'whole' | 'each-wait';
  /** The request may follow others so marked on a connection still waiting for their answers (HTTP/1.1 pipelining: a transport that can). */
  pipeline?: boolean;
  /**
   * A write whose outcome the caller counts (a bulk create): once sent, an interrupt (the client's signal)
   * does not cut it off; its answer is awaited (within its deadline) and returned, so the caller can say
   * what the server holds. It is never sent again after the interrupt. Unsent, the interrupt stops it as any.
   */
  untilAnswered?: boolean;
}

export interface HttpResponse<T = unknown> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  data: T;
  url: string;
  /** Bytes of the body read; with maxBodyBytes, whether more were coming. */
  bytes?: number;
  truncated?: boolean;
}

/** Credentials for a request: headers and/or query parameters. */
export interface Credentials {
  headers?: Record<string, string>;
  query?: Record<string, string>;
}

/** One request as a transport carries it: the URL, method, headers and body built by HttpClient. */
export interface TransportRequest {
  method: Dispatcher.HttpMethod;
  headers: Record<string, string>;
  body?: string | FormData;
  /** The request's deadline (the whole exchange) and its milliseconds; `abort` tells it without an AbortSignal. */
  signal: AbortSignal;
  abort?: AbortView;
  timeoutMs: number;
  /** The body is read as it streams (RequestOptions' consume or maxBodyBytes), not whole. */
  stream?: boolean;
  /** RequestOptions' pipeline. */
  pipeline?: boolean;
}

/** What a transport gives back: the status, the headers, and a body read once. */
export interface TransportResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: AnswerBody;
}

/**
 * What carries a request: undici over the network (the default, `viaNetwork`), or a server in this
 * very process (the embedded mock answers without a socket). Retries, deadlines, pacing, credentials
 * and errors stay HttpClient's whichever carries it.
 */
export type Transport = (url: URL, req: TransportRequest) => Promise<TransportResponse>;

export interface HttpClientOptions {
  service: string;
  baseUrl: string;
  /** The credentials of a request (its method and path: a client may refuse one its sign-in cannot make). */
  credentials?: (req: { method: string; path: string }) => Promise<Credentials | undefined>;
  /**
   * New credentials after the server refused the ones sent as expired (401 with a Bearer `invalid_token`
   * challenge, RFC 6750 §3.1: a server whose clock runs ahead of ours ends a token early); undefined when
   * they cannot be renewed. The request is then sent once more: a 401 means the server did nothing.
   */
  renewCredentials?: (refused: Credentials) => Promise<Credentials | undefined>;
  /** The undici dispatcher of network requests (default: one shared keep-alive agent; tests: a MockAgent). */
  dispatcher?: Dispatcher;
  /** Carries the requests instead of undici (see Transport). */
  transport?: Transport;
  pacer?: RequestPacer;
  /** Attempts in all, including the first. */
  maxAttempts?: number;
  /**
   * Retry a network error only when a kept-alive connection closed under the request (ECONNRESET,
   * EPIPE, "other side closed"), at once: a refused or silent endpoint is reported, not waited on.
   */
  retryStaleOnly?: boolean;
  /**
   * How long one request may wait for answers, all retries and their backoff included (default 30 s,
   * `OPSCTL_HTTP_TIMEOUT_MS`). Rate-limit waits (pacing, 429 Retry-After) do not count: the server answered.
   */
  timeoutMs?: number;
  /** Lines for the user on stderr: what a slow request waits for, each retry. */
  notice?: (line: string) => void;
  /** When to say that a request is still waiting (default 3 s, or half the timeout when that is shorter). */
  noticeAfterMs?: number;
  debug?: (line: string) => void;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  /** Longest wait we accept from Retry-After before giving up (ms). */
  maxRetryAfterMs?: number;
  /** Aborts backoff and Retry-After waits (Ctrl-C). */
  signal?: AbortSignal;
  /** Ctrl-C as the context's abort, used instead of `signal`: told without a listener on an AbortSignal (lazy-abort.ts). */
  interrupt?: AbortView & { readonly signal: AbortSignal };
  /**
   * An in-process server's own error behind a 503 (the embedded mock's state file, directory or lock):
   * thrown as it is, with its path and fix, instead of an HTTP error, and never retried.
   */
  localError?: () => OpsError | undefined;
  userAgent?: string;
}

export const DEFAULT_TIMEOUT_MS = 30_000;

let sharedAgent: Agent | undefined;
let undici: Promise<typeof import('./undici-lite.js')> | undefined;
/** undici, loaded with the first request that goes over the network: a command answered in-process never loads it. */
const loadUndici = () => (undici ??= import('./undici-lite.js'));

/** One keep-alive agent per process; undici keeps a connection pool per origin inside it. */
export async function defaultDispatcher(): Promise<Agent> {
  const { Agent } = await loadUndici();
  sharedAgent ??= new Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000, connections: 16 });
  return sharedAgent;
}

/** The network transport: undici through `dispatcher` (default: the shared agent). */
export function viaNetwork(dispatcher?: Dispatcher): Transport {
  return async (url, { method, headers, body, signal, timeoutMs }) => {
    const { request } = await loadUndici();
    return request(url, {
      method,
      headers,
      body,
      dispatcher: dispatcher ?? (await defaultDispatcher()),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal,
    });
  };
}
/**
 * Closes the shared agent at the end of a command. After an interrupt it destroys it instead, so a
 * request still in flight does not hold the close, and so the exit.
 */
export async function closeDefaultDispatcher({ interrupted = false }: { interrupted?: boolean } = {}): Promise<void> {
  const a = sharedAgent;
  sharedAgent = undefined;
  await (interrupted ? a?.destroy() : a?.close());
}

/**
 * The one HTTP client of opsctl: keep-alive pools, timeouts, retries with backoff and full jitter
 * (idempotent methods on network errors and 5xx; every method on 429, which the server did not
 * process), pacing under a rate limit, Retry-After, redacted --debug logs, and no credentials over
 * plain HTTP except to loopback.
 */
export class HttpClient {
  readonly service: string;
  readonly baseUrl: string;
  private readonly opts: HttpClientOptions;
  /** Requests actually put on the wire (retries included). Useful for `apply` summaries and tests. */
  sent = 0;
  private waitingSaid = false;
  private readonly transport: Transport;
  private readonly interrupt?: AbortView;

  constructor(opts: HttpClientOptions) {
    this.opts = opts;
    this.interrupt = opts.interrupt ?? (opts.signal && abortOf({ signal: opts.signal }));
    this.transport = opts.transport ?? viaNetwork(opts.dispatcher);
    this.service = opts.service;
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
  }

  get pacer(): RequestPacer | undefined {
    return this.opts.pacer;
  }

  get<T = unknown>(path: string, query?: Query): Promise<T> {
    return this.request<T>({ method: 'GET', path, query }).then((r) => r.data);
  }
  post<T = unknown>(path: string, json?: unknown, query?: Query): Promise<T> {
    return this.request<T>({ method: 'POST', path, json, query }).then((r) => r.data);
  }
  put<T = unknown>(path: string, json?: unknown): Promise<T> {
    return this.request<T>({ method: 'PUT', path, json }).then((r) => r.data);
  }
  patch<T = unknown>(path: string, json?: unknown, query?: Query): Promise<T> {
    return this.request<T>({ method: 'PATCH', path, json, query }).then((r) => r.data);
  }
  delete<T = unknown>(path: string, query?: Query): Promise<T> {
    return this.request<T>({ method: 'DELETE', path, query }).then((r) => r.data);
  }

  url(path: string, query?: Query): URL {
    const u = /^https?:\/\//.test(path) ? new URL(path) : new URL(this.baseUrl + (path.startsWith('/') ? path : `/${path}`));
    for (const [k, v] of Object.entries(query ?? {})) {
      if (v === undefined || v === null) continue;
      if (Array.isArray(v)) v.forEach((item) => u.searchParams.append(k, String(item)));
      else u.searchParams.set(k, String(v));
    }
    return u;
  }

  async request<T = unknown>(req: RequestOptions): Promise<HttpResponse<T>> {
    let method = req.method ?? 'GET';
    let url = this.url(req.path, req.query);
    let creds = req.auth === false ? undefined : await this.opts.credentials?.({ method, path: `${url.pathname}${url.search}` });
    let hasCreds = Boolean(creds && (Object.keys(creds.headers ?? {}).length || Object.keys(creds.query ?? {}).length));
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': this.opts.userAgent ?? 'opsctl',
      ...(req.headers ?? {}),
      ...(creds?.headers ?? {}),
    };
    for (const [k, v] of Object.entries(creds?.query ?? {})) url.searchParams.set(k, v);
    const encoded = requestBody(req);
    let body = encoded.body;
    if (encoded.contentType) headers['content-type'] = encoded.contentType;
    const idempotent = req.idempotent ?? IDEMPOTENT_METHODS.has(method);

    const maxAttempts = this.opts.maxAttempts ?? 4;
    const budgetMs = req.timeoutMs ?? this.opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    // Time spent waiting on this endpoint: attempts without a usable answer and the backoff between them.
    let spent = 0;
    let redirects = 0;
    let renewed = false;
    const interrupted = () => new InterruptedError(`${this.service}: ${method} ${redactUrl(url.toString())} interrupted`);
    for (let attempt = 1; ; attempt++) {
      // Ctrl-C ends the request loop: no new attempt, no "retrying" for a request the interrupt cut off
      if (this.interrupt?.aborted) throw interrupted();
      if (hasCreds) assertSafeTransport(url, this.service);
      const release = this.opts.pacer ? await this.opts.pacer.acquire() : () => undefined;
      const started = Date.now();
      // the redacted URL, built only for a line someone reads (a notice, an error, --debug)
      let shownText: string | undefined;
      const shown = () => (shownText ??= redactUrl(url.toString()));
      // (the redacted lines are built only for a --debug sink: a kv verb sends up to a dozen requests)
      if (this.opts.debug) {
        this.debug(`> ${method} ${shown()}${attempt > 1 ? ` (attempt ${attempt})` : ''}`);
        this.debug(`> headers ${JSON.stringify(redactHeaders(headers))}`);
        if (typeof body === 'string') this.debug(`> body ${truncate(JSON.stringify(redactBody(tryJson(body))))}`);
      }
      const left = Math.max(1, budgetMs - spent);
      const waiting = this.waitingNotice(method, shown, budgetMs);
      let res: TransportResponse | undefined;
      let raw: string;
      let bytes: number;
      let truncated: boolean;
      let consumeError: { err: unknown } | undefined;
      // One deadline for the whole exchange, body included: undici's own timeouts are per wait (a
      // server that drips a byte a second never trips its body timeout). A download's (each-wait) is armed again by each piece.
      const deadline = new LazyAbort();
      let timer = setTimeout(() => deadline.abort(new DeadlineError(left)), left);
      const rearm = () => {
        clearTimeout(timer);
        timer = setTimeout(() => deadline.abort(new DeadlineError(left, 'no bytes of the body for')), left);
      };
      const onInterrupt = () => deadline.abort(interrupted());
      const unwatch = req.untilAnswered ? undefined : this.interrupt?.onAbort(onInterrupt);
      try {
        this.sent++;
        const streamed = Boolean(req.consume) || req.maxBodyBytes !== undefined;
        res = await this.transport(url, {
          method,
          headers,
          body,
          get signal() {
            return deadline.signal;
          },
          abort: deadline,
          timeoutMs: left,
          ...(streamed ? { stream: true } : {}),
          ...(req.pipeline ? { pipeline: true } : {}),
        });
        // the answer has come (its body may still be coming): nothing left to say about waiting for it
        clearTimeout(waiting);
        if (req.consume && res.statusCode >= 200 && res.statusCode < 300) {
          const stream = res.body;
          const pieces = req.deadline === 'each-wait' ? rearming(stream, rearm) : stream;
          await req.consume(pieces, { status: res.statusCode, headers: res.headers }).catch((err: unknown) => {
            discard(stream);
            // The deadline's abort surfaces as a network error below; the consumer's own error as it is.
            if (!deadline.aborted) consumeError = { err };
            throw err;
          });
          ({ raw, bytes, truncated } = { raw: '', bytes: 0, truncated: false });
        } else ({ raw, bytes, truncated } = await readBody(res.body, req.maxBodyBytes));
      } catch (err) {
        clearTimeout(timer);
        clearTimeout(waiting);
        release();
        unwatch?.();
        // an interrupt (or the client it destroyed: "The client is destroyed") is not a network error to retry;
        // a request sent untilAnswered failed on its own (its answer lost): said as the network error it is
        if (this.interrupt?.aborted && !req.untilAnswered) throw interrupted();
        if (consumeError) throw consumeError.err;
        const msg = deadline.aborted
          ? res
            ? `${req.deadline === 'each-wait' ? 'no bytes of the answer for' : 'the answer was not complete within'} ${formatMs(left)} (${res.statusCode} received, the body still coming)`
            : `no answer within ${formatMs(left)}`
          : describeNetworkError(err, left);
        spent += Date.now() - started;
        this.debug(`< network error after ${Date.now() - started} ms: ${msg}`);
        const stale = isStaleConnection(err);
        if (idempotent && attempt < maxAttempts && spent < budgetMs && (stale || !this.opts.retryStaleOnly) && !deadline.aborted && !this.interrupt?.aborted) {
          const wait = this.opts.retryStaleOnly ? 0 : Math.min(this.backoffMs(attempt), budgetMs - spent);
          this.opts.notice?.(`${this.service}: ${method} ${shown()}: ${msg}; retrying (attempt ${attempt + 1} of ${maxAttempts})`);
          await this.sleep(wait);
          spent += wait;
          continue;
        }
        const tries = attempt > 1 ? ` (${attempt} attempts)` : '';
        const what =
          spent >= budgetMs && !deadline.aborted && !msg.startsWith('no answer')
            ? `no answer within ${formatMs(budgetMs)}${tries}, the last: ${msg}`
            : `${msg}${tries}`;
        throw new NetworkError(`${this.service}: ${method} ${shown()} failed: ${what}`, {
          hint: `check that the ${this.service} endpoint ${this.baseUrl} is up and reachable (opsctl config get ${this.service}); OPSCTL_HTTP_TIMEOUT_MS sets how long to wait`,
          cause: deadline.aborted ? deadline.reason : err,
        });
      }
      clearTimeout(timer);
      clearTimeout(waiting);
      release();
      unwatch?.();
      this.debug(`< ${res.statusCode} (${Date.now() - started} ms)`);
      const data = req.text ? raw : parseBody(raw, res.headers['content-type']);
      const local = res.statusCode === 503 ? this.opts.localError?.() : undefined;
      if (local) throw local;

      if (req.followRedirects && [301, 302, 303, 307, 308].includes(res.statusCode) && res.headers.location && redirects < 5) {
        redirects++;
        const to = new URL(String(res.headers.location), url);
        if (to.origin !== url.origin && creds) {
          // the credentials were for the request's own origin: another one never sees them (nor renews them)
          for (const k of Object.keys(creds.headers ?? {})) delete headers[k];
          creds = undefined;
          hasCreds = false;
        }
        if ((res.statusCode === 303 && method !== 'HEAD') || (res.statusCode <= 302 && method === 'POST')) {
          method = 'GET';
          body = undefined;
          delete headers['content-type'];
        }
        url = to;
        attempt--;
        continue;
      }
      if (
        res.statusCode === 401 &&
        creds &&
        hasCreds &&
        !renewed &&
        this.opts.renewCredentials &&
        /\binvalid_token\b/.test(String(res.headers['www-authenticate'] ?? ''))
      ) {
        renewed = true;
        const fresh = await this.opts.renewCredentials(creds);
        if (fresh) {
          this.debug('< 401 invalid_token: sending again with renewed credentials');
          for (const [k, v] of Object.entries(fresh.headers ?? {})) headers[k] = v;
          for (const [k, v] of Object.entries(fresh.query ?? {})) url.searchParams.set(k, v);
          creds = fresh;
          attempt--;
          continue;
        }
      }
      if (req.anyStatus) return { status: res.statusCode, headers: res.headers, data: data as T, url: url.toString(), bytes, truncated };
      // an answer that came in after Ctrl-C is returned as it is (a write may have been made), never retried
      const retryable = attempt < maxAttempts && !this.interrupt?.aborted;
      if (res.statusCode === 429 && retryable) {
        const wait = retryAfterMs(res.headers['retry-after']) ?? this.backoffMs(attempt);
        if (wait <= (this.opts.maxRetryAfterMs ?? 120_000)) {
          this.opts.pacer?.pause(wait);
          this.debug(`< 429: waiting ${wait} ms before retrying`);
          await this.sleep(wait);
          continue;
        }
      }
      if (RETRY_STATUSES.has(res.statusCode) && idempotent && retryable) {
        spent += Date.now() - started;
        const wait = Math.min(retryAfterMs(res.headers['retry-after']) ?? this.backoffMs(attempt), HTTP_BACKOFF.capMs);
        if (spent + wait < budgetMs) {
          this.opts.notice?.(`${this.service}: ${method} ${shown()} answered ${res.statusCode}; retrying (attempt ${attempt + 1} of ${maxAttempts})`);
          await this.sleep(wait);
          spent += wait;
          continue;
        }
      }
      if (res.statusCode >= 400 && !req.okStatuses?.includes(res.statusCode)) {
        throw new ApiError(this.service, res.statusCode, serverMessage(data, res.statusCode), data);
      }
      return { status: res.statusCode, headers: res.headers, data: data as T, url: url.toString(), bytes, truncated };
    }
  }

  /** Says once per client, after a few seconds without an answer, what the command is waiting for. */
  private waitingNotice(method: string, shown: () => string, budgetMs: number): NodeJS.Timeout | undefined {
    if (!this.opts.notice || this.waitingSaid) return undefined;
    const after = this.opts.noticeAfterMs ?? Math.min(3_000, Math.floor(budgetMs / 2));
    const t = setTimeout(() => {
      this.waitingSaid = true;
      this.opts.notice?.(
        `${this.service}: waiting for an answer to ${method} ${shown()} (${formatMs(after)} so far; giving up after ${formatMs(budgetMs)}, OPSCTL_HTTP_TIMEOUT_MS)`,
      );
    }, after);
    t.unref();
    return t;
  }

  private debug(line: string): void {
    this.opts.debug?.(`[${this.service}] ${line}`);
  }

  private backoffMs(attempt: number): number {
    return backoffMs(attempt, HTTP_BACKOFF, this.opts.random);
  }

  private sleep(ms: number): Promise<void> {
    return (this.opts.sleep ?? ((t) => abortableSleep(t, this.opts.interrupt?.signal ?? this.opts.signal)))(ms);
  }
}

/** Credentials go over HTTPS, or over plain HTTP only to a loopback address. */
export function assertSafeTransport(url: URL, service: string): void {
  if (url.protocol === 'https:') return;
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) return;
  throw new UsageError(`refusing to send ${service} credentials over plain HTTP to ${url.host}`, {
    code: 'insecure_transport',
    hint: `use an https:// endpoint (opsctl config set ${service} https://…), or a loopback address for a local mock`,
  });
}

/** undici's error, in words a user can act on. */
function describeNetworkError(err: unknown, timeoutMs: number): string {
  const e = err as Error & { code?: string };
  if (e.code === 'UND_ERR_HEADERS_TIMEOUT') return `no answer within ${formatMs(timeoutMs)}`;
  if (e.code === 'UND_ERR_BODY_TIMEOUT') return `the answer stalled for ${formatMs(timeoutMs)}`;
  return e.message;
}
