import { connect } from 'node:net';

/** A small seeded PRNG (mulberry32): the same seed gives the same requests on every run. */
export function seeded(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick<T>(list: readonly T[]): T {
      return list[Math.floor(next() * list.length)]!;
    },
  };
}
export type Rng = ReturnType<typeof seeded>;

export interface RawRequest {
  method: string;
  /** The request target exactly as written on the request line. */
  target: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Overrides the Content-Length header (a lie: more than the body sent). */
  contentLength?: string;
  /** What the request is, for the failure list. */
  label: string;
}

/** The request's bytes: request line, headers (`connection: close`, a Content-Length unless told otherwise), body. */
function encode(r: RawRequest): Buffer {
  const body = r.body === undefined ? Buffer.alloc(0) : Buffer.isBuffer(r.body) ? r.body : Buffer.from(r.body, 'utf8');
  const headers: Record<string, string> = { host: '127.0.0.1', connection: 'close', ...r.headers };
  if (r.contentLength !== undefined) headers['content-length'] = r.contentLength;
  else if (headers['transfer-encoding'] === undefined && (body.length > 0 || ['POST', 'PUT', 'PATCH'].includes(r.method))) {
    headers['content-length'] = String(body.length);
  }
  const head = `${r.method} ${r.target} HTTP/1.1\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), body]);
}

export type RawOutcome = { status: number } | { status: 'timeout' } | { status: 'error'; message: string };

/**
 * Sends one request over a fresh TCP connection, byte for byte as given (so malformed targets and lying
 * lengths reach the server), and resolves with the status line's code as soon as it arrives. A request
 * not answered within `timeoutMs` is a hang.
 */
export function rawRequest(port: number, r: RawRequest, timeoutMs: number): Promise<RawOutcome> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    let done = false;
    const finish = (out: RawOutcome) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(out);
    };
    const timer = setTimeout(() => finish({ status: 'timeout' }), timeoutMs);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      got += chunk;
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(got);
      if (m) finish({ status: Number(m[1]) });
      else if (got.length > 64 || got.includes('\r\n')) finish({ status: 'error', message: `not an HTTP response: ${JSON.stringify(got.slice(0, 64))}` });
    });
    socket.on('error', (err) => finish({ status: 'error', message: err.message }));
    socket.on('close', () => finish({ status: 'error', message: `connection closed without a response${got ? `: ${JSON.stringify(got.slice(0, 64))}` : ''}` }));
    socket.write(encode(r));
  });
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Like rawRequest, but reads the whole reply (the request says `connection: close`, so the server ends
 * the connection after it, or the reply's Content-Length says it is complete) and parses status,
 * headers and body. The socket stays open until then: a lying Content-Length is never completed.
 */
export function rawExchange(port: number, r: RawRequest, timeoutMs: number): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete reply to ${r.label} within ${timeoutMs} ms`));
    }, timeoutMs);
    const parse = () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      if (!m || end < 0) return undefined;
      const headers: Record<string, string> = {};
      for (const line of text.slice(0, end).split('\r\n').slice(1)) {
        const i = line.indexOf(':');
        headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      const body = text.slice(end + 4);
      const length = headers['content-length'];
      if (length !== undefined && Buffer.byteLength(body) < Number(length)) return undefined;
      return { status: Number(m[1]), headers, body };
    };
    const finish = (out: RawResponse | Error) => {
      clearTimeout(timer);
      socket.destroy();
      if (out instanceof Error) reject(out);
      else resolve(out);
    };
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      const out = parse();
      if (out && out.headers['content-length'] !== undefined) finish(out);
    });
    socket.on('error', (err) => finish(parse() ?? err));
    socket.on('close', () => finish(parse() ?? new Error(`connection closed without a full reply to ${r.label}`)));
    socket.write(encode(r));
  });
}
