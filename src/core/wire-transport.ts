/**
 * A transport of HttpClient (http.ts) that speaks HTTP/1.1 itself on a socket of `node:net` (`node:tls` for
 * https://): what carries the kv client's calls whose answer is read whole (every gateway call, /version; a
 * body read as it streams, a watch or a snapshot, goes to node-transport.ts). A kv verb is a command an
 * operator runs in loops, and `kv status` asks 11 questions: `node:http` costs such a verb about 5 ms of CPU
 * to load and, past the first request, about 0.8 ms per request for its ClientRequest, IncomingMessage and
 * their streams, where a request here is one write and a parse of the bytes that come back (see
 * docs/development.md, "kv verbs: start-up"). The rules of a request (its deadline, the retry of a stale
 * connection, redirects, credentials, redaction) stay HttpClient's; what is here is the message itself:
 * - one keep-alive connection per request at a time, kept per host:port once answered (unref'd: an idle
 *   connection never holds the process), made anew when none is idle;
 * - an answer framed by Content-Length, chunked transfer coding or the connection's close; 1xx answers
 *   skipped; a connection is kept only when its answer ended exactly where the bytes did;
 * - a connection closed before a whole answer is `socket hang up` (ECONNRESET), as Node's HTTP client
 *   says it, so HttpClient sends an idempotent request once more on a fresh connection;
 * - header names and values are checked as Node checks them: no line breaks into the message.
 */
import type { Socket } from 'node:net';
import type { Transport, TransportResponse } from './http.js';
import { DialTimeout, type NodeTransportOptions } from './node-transport.js';
import { abortOf } from './lazy-abort.js';

/** The most bytes of a status line and headers (Node's own limit is 16 KB). */
const MAX_HEAD_BYTES = 64 * 1024;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const BAD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
const CRLF2 = Buffer.from('\r\n\r\n');

/** The error of a connection closed before its answer was whole (Node's HTTP client's words and code). */
export function hangUp(): NodeJS.ErrnoException {
  return Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
}

/** An answer that breaks HTTP/1.1's framing (the connection is dropped). */
class ParseError extends Error {
  readonly code = 'HPE_INVALID';
}

/** A whole answer: its status, headers, body, and whether the connection may carry another request. */
interface Answer {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  reusable: boolean;
}

/**
 * Parses one answer from the bytes as they come. `push` returns the answer once whole (the connection's
 * close ends a body framed by it: `end`), undefined while more is needed; it throws a ParseError.
 */
export class AnswerParser {
  private buf: Buffer = Buffer.alloc(0);
  private head?: { statusCode: number; headers: Answer['headers']; keepAlive: boolean };
  private framing: 'length' | 'chunked' | 'close' | 'none' = 'none';
  private left = 0;
  private readonly parts: Buffer[] = [];
  private trailers = false;

  constructor(private readonly method: string) {}

  push(chunk: Buffer): Answer | undefined {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    while (!this.head) {
      const end = this.buf.indexOf(CRLF2);
      if (end < 0) {
        if (this.buf.length > MAX_HEAD_BYTES) throw new ParseError(`the answer's headers exceed ${MAX_HEAD_BYTES} bytes`);
        return undefined;
      }
      const head = parseHead(this.buf.subarray(0, end).toString('latin1'));
      this.buf = this.buf.subarray(end + 4);
      // 100 Continue, 103 Early Hints: the real answer follows
      if (head.statusCode >= 100 && head.statusCode < 200) continue;
      this.head = head;
      this.framing = framingOf(this.method, head.statusCode, head.headers);
      if (this.framing === 'length') this.left = Number(head.headers['content-length']);
    }
    return this.body();
  }

  /** The connection closed: the answer, when its body was framed by the close. */
  end(): Answer | undefined {
    if (!this.head || this.framing !== 'close') return undefined;
    this.parts.push(this.buf);
    return this.done({ framed: false });
  }

  private body(): Answer | undefined {
    if (this.framing === 'none') return this.done({ framed: true });
    if (this.framing === 'close') {
      this.parts.push(this.buf);
      this.buf = Buffer.alloc(0);
      return undefined;
    }
    if (this.framing === 'length') {
      const take = Math.min(this.left, this.buf.length);
      this.parts.push(this.buf.subarray(0, take));
      this.buf = this.buf.subarray(take);
      this.left -= take;
      return this.left === 0 ? this.done({ framed: true }) : undefined;
    }
    for (;;) {
      if (this.trailers) {
        // trailer fields, then an empty line (right away when there are none)
        if (this.buf.length >= 2 && this.buf[0] === 0x0d && this.buf[1] === 0x0a) {
          this.buf = this.buf.subarray(2);
          return this.done({ framed: true });
        }
        const end = this.buf.indexOf(CRLF2);
        if (end < 0) return undefined;
        this.buf = this.buf.subarray(end + 4);
        return this.done({ framed: true });
      }
      if (this.left > 0) {
        const take = Math.min(this.left, this.buf.length);
        this.parts.push(this.buf.subarray(0, take));
        this.buf = this.buf.subarray(take);
        this.left -= take;
        if (this.left > 0) return undefined;
        this.left = -2;
      }
      if (this.left === -2) {
        // the line break after a chunk's data
        if (this.buf.length < 2) return undefined;
        if (this.buf[0] !== 0x0d || this.buf[1] !== 0x0a) throw new ParseError('a chunk does not end in a line break');
        this.buf = this.buf.subarray(2);
        this.left = 0;
      }
      const eol = this.buf.indexOf('\r\n');
      if (eol < 0) {
        if (this.buf.length > 1024) throw new ParseError('a chunk size line is too long');
        return undefined;
      }
      const size = /^([0-9a-fA-F]{1,12})[ \t]*(;.*)?$/.exec(this.buf.subarray(0, eol).toString('latin1'));
      if (!size) throw new ParseError('a chunk size is not hexadecimal');
      this.buf = this.buf.subarray(eol + 2);
      this.left = parseInt(size[1]!, 16);
      if (this.left === 0) this.trailers = true;
    }
  }

  private done({ framed }: { framed: boolean }): Answer {
    const head = this.head!;
    return {
      statusCode: head.statusCode,
      headers: head.headers,
      body: this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts),
      // a body framed by the close: the connection goes
      reusable: framed && head.keepAlive,
    };
  }

  /** The bytes past the whole answer: the next answer's, on a connection carrying requests in a row. */
  rest(): Buffer {
    return this.buf;
  }
}

function parseHead(text: string): { statusCode: number; headers: Answer['headers']; keepAlive: boolean } {
  const lines = text.split('\r\n');
  const status = /^HTTP\/1\.([01]) (\d{3})(?: .*)?$/.exec(lines[0] ?? '');
  if (!status) throw new ParseError(`the answer does not start with an HTTP/1.x status line: ${JSON.stringify((lines[0] ?? '').slice(0, 60))}`);
  const headers: Answer['headers'] = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).toLowerCase();
    if (colon <= 0 || !TOKEN.test(name)) throw new ParseError(`a header line is malformed: ${JSON.stringify(line.slice(0, 60))}`);
    const value = line.slice(colon + 1).trim();
    const had = headers[name];
    if (had === undefined) headers[name] = name === 'set-cookie' ? [value] : value;
    else if (Array.isArray(had)) had.push(value);
    else headers[name] = `${had}, ${value}`;
  }
  const connection = String(headers.connection ?? '').toLowerCase();
  const keepAlive = status[1] === '1' ? !/\bclose\b/.test(connection) : /\bkeep-alive\b/.test(connection);
  return { statusCode: Number(status[2]), headers, keepAlive };
}

function framingOf(method: string, status: number, headers: Answer['headers']): 'length' | 'chunked' | 'close' | 'none' {
  if (method === 'HEAD' || status === 204 || status === 304) return 'none';
  const te = String(headers['transfer-encoding'] ?? '').toLowerCase();
  if (te) {
    if (!/(^|,)\s*chunked\s*$/.test(te)) throw new ParseError(`an answer in transfer coding "${te}" (only chunked is read)`);
    return 'chunked';
  }
  const length = headers['content-length'];
  if (length === undefined) return 'close';
  const lengths = new Set(
    String(length)
      .split(',')
      .map((s) => s.trim()),
  );
  const [only] = lengths;
  if (lengths.size !== 1 || !/^\d{1,15}$/.test(only!)) throw new ParseError(`the answer's Content-Length is not one number: ${String(length)}`);
  return Number(only) === 0 ? 'none' : 'length';
}

/** One connection: its exchanges in the order their requests went out (one, or several in a row when pipelined). */
interface Conn {
  socket: Socket;
  key: string;
  queue: Exchange[];
  /** Requests written in this turn of the event loop go out in one write (pipelined ones). */
  corked: boolean;
}

interface Exchange {
  parser: AnswerParser;
  pipeline: boolean;
  settle: (err: Error | undefined, answer?: Answer) => void;
}

export class WireTransport {
  private readonly idle = new Map<string, Conn[]>();
  private readonly open = new Set<Conn>();

  constructor(private readonly opts: NodeTransportOptions = {}) {}

  /**
   * One request: resolves with the whole answer (its body read: `text()` returns it). A request marked
   * `pipeline` may follow others marked so on a connection still waiting for their answers (HTTP/1.1
   * pipelining; the answers come in order): the requests made in one turn of the event loop then leave
   * in one write.
   */
  readonly send: Transport = (url, req) =>
    new Promise<TransportResponse>((resolve, reject) => {
      if (req.body !== undefined && typeof req.body !== 'string') {
        reject(new Error('the kv transport sends JSON bodies only'));
        return;
      }
      const message = serialise(url, req.method, req.headers, req.body);
      if (message instanceof Error) {
        reject(message);
        return;
      }
      // (read through abortOf: HttpClient's requests make no AbortSignal for this transport)
      const abort = abortOf(req);
      const cutOff = (): Error => abort.reason as Error;
      if (abort.aborted) {
        reject(cutOff());
        return;
      }
      const secure = url.protocol === 'https:';
      const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
      const port = Number(url.port || (secure ? 443 : 80));
      const key = `${secure ? 's' : 'p'}:${host}:${port}`;
      const pipeline = Boolean(req.pipeline);
      const conn = (pipeline ? this.inRow(key) : undefined) ?? this.take(key) ?? this.connect({ secure, host, port, key });
      // the deadline (or Ctrl-C): this request fails with its reason, any pipelined with it as cut short (HttpClient sends them again)
      const onAbort = () => {
        const at = conn.queue.indexOf(exchange);
        if (at >= 0) conn.queue.splice(at, 1);
        exchange.settle(cutOff());
        this.drop(conn);
      };
      let unwatch = (): void => undefined;
      const exchange: Exchange = {
        parser: new AnswerParser(req.method),
        pipeline,
        settle: (err, answer) => {
          unwatch();
          if (err || !answer) reject(err ?? hangUp());
          else resolve({ statusCode: answer.statusCode, headers: answer.headers, body: bodyOf(answer.body) });
        },
      };
      conn.queue.push(exchange);
      unwatch = abort.onAbort(onAbort);
      conn.socket.ref();
      if (pipeline && !conn.corked) {
        conn.corked = true;
        conn.socket.cork();
        setImmediate(() => {
          conn.corked = false;
          conn.socket.uncork();
        });
      }
      conn.socket.write(message);
    });

  /** Closes every connection (the end of the command): idle ones, and after an interrupt busy ones too. */
  close(): void {
    for (const c of this.open) c.socket.destroy();
    this.open.clear();
    this.idle.clear();
  }

  /** A connection to `key` whose requests in flight were all pipelined: the next one may follow them. */
  private inRow(key: string): Conn | undefined {
    for (const c of this.open) if (c.key === key && c.queue.length && c.queue.every((x) => x.pipeline) && c.socket.writable) return c;
    return undefined;
  }

  private take(key: string): Conn | undefined {
    const list = this.idle.get(key);
    for (let c = list?.pop(); c; c = list?.pop()) if (!c.socket.destroyed && c.socket.writable) return c;
    return undefined;
  }

  private release(conn: Conn): void {
    conn.socket.unref();
    const list = this.idle.get(conn.key);
    if (list) list.push(conn);
    else this.idle.set(conn.key, [conn]);
  }

  /** The connection ends: every exchange still on it fails (`err`, else socket hang up). */
  private drop(conn: Conn, err?: Error): void {
    conn.socket.destroy();
    this.open.delete(conn);
    const list = this.idle.get(conn.key);
    const at = list?.indexOf(conn) ?? -1;
    if (at >= 0) list!.splice(at, 1);
    for (const x of conn.queue.splice(0)) x.settle(err ?? hangUp());
  }

  /** Bytes for the exchanges in order: each whole answer settles its exchange, the bytes past it go to the next. */
  private received(conn: Conn, chunk: Buffer): void {
    let bytes = chunk;
    for (;;) {
      const head = conn.queue[0];
      // bytes nobody asked for: this connection can no longer be trusted to frame an answer
      if (!head) return this.drop(conn);
      let answer: Answer | undefined;
      try {
        answer = head.parser.push(bytes);
      } catch (err) {
        return this.drop(conn, err as Error);
      }
      if (!answer) return;
      conn.queue.shift();
      head.settle(undefined, answer);
      bytes = head.parser.rest();
      if (!answer.reusable) return this.drop(conn);
      if (!conn.queue.length) {
        if (bytes.length) return this.drop(conn);
        return this.release(conn);
      }
      if (!bytes.length) return;
    }
  }

  private connect({ secure, host, port, key }: { secure: boolean; host: string; port: number; key: string }): Conn {
    const tls = this.opts.tls;
    const socket: Socket = secure
      ? process.getBuiltinModule('node:tls').connect({
          host,
          port,
          // a name, not an address, is what the certificate is checked against (as https.Agent sends it)
          servername: process.getBuiltinModule('node:net').isIP(host) ? undefined : host,
          ca: tls?.ca,
          cert: tls?.cert,
          key: tls?.key,
          rejectUnauthorized: tls?.rejectUnauthorized ?? true,
        })
      : process.getBuiltinModule('node:net').connect({ host, port });
    socket.setNoDelay(true);
    const conn: Conn = { socket, key, queue: [], corked: false };
    this.open.add(conn);
    const hostPort = `${host}:${port}`;
    const dialMs = this.opts.dialMs;
    if (dialMs !== undefined) {
      const timer = setTimeout(() => socket.destroy(new DialTimeout(dialMs)), dialMs);
      const made = () => clearTimeout(timer);
      socket.once(secure ? 'secureConnect' : 'connect', made);
      socket.once('close', made);
    }
    socket.on('data', (chunk: Buffer) => this.received(conn, chunk));
    socket.on('error', (err) => {
      this.opts.onSocketError?.(hostPort, err);
      this.drop(conn, err);
    });
    // the other side closed: an answer framed by the close is whole, anything else was cut short
    socket.on('end', () => {
      const head = conn.queue[0];
      const answer = head?.parser.end();
      if (head && answer) {
        conn.queue.shift();
        head.settle(undefined, answer);
      }
      this.drop(conn);
    });
    socket.on('close', () => this.drop(conn));
    return conn;
  }
}

/** The request's bytes: request line, Host, the headers, Content-Length, the body; the error of a header Node would refuse. */
function serialise(url: URL, method: string, headers: Record<string, string>, body: string | undefined): Buffer | TypeError {
  let head = `${method} ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\n`;
  for (const [name, value] of Object.entries(headers)) {
    if (!TOKEN.test(name)) return Object.assign(new TypeError(`Header name must be a valid HTTP token ["${name}"]`), { code: 'ERR_INVALID_HTTP_TOKEN' });
    if (BAD_VALUE.test(value)) return Object.assign(new TypeError(`Invalid character in header content ["${name}"]`), { code: 'ERR_INVALID_CHAR' });
    if (/^(host|content-length|transfer-encoding|connection)$/i.test(name)) continue;
    head += `${name}: ${value}\r\n`;
  }
  if (body === undefined) return Buffer.from(`${head}\r\n`, 'latin1');
  const data = Buffer.from(body, 'utf8');
  return Buffer.concat([Buffer.from(`${head}Content-Length: ${data.length}\r\n\r\n`, 'latin1'), data]);
}

/** A body already read whole, in the shape HttpClient reads a transport's body. */
function bodyOf(data: Buffer): TransportResponse['body'] {
  return {
    text: () => Promise.resolve(data.toString('utf8')),
    destroy: () => undefined,
    [Symbol.asyncIterator]() {
      let left = data.length > 0;
      return {
        next: () => {
          const chunk = left ? { done: false as const, value: data } : { done: true as const, value: undefined };
          left = false;
          return Promise.resolve(chunk);
        },
      };
    },
  };
}
