import { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import { WHOLE_BODY } from './body.js';
import type { TransportRequest, TransportResponse } from './transport.js';
import type { MockIncoming, MockOutgoing } from './http.js';

/**
 * A request to the mock from this very process (the embedded profile): the same pipeline as over
 * HTTP, without a socket, an HTTP parser or undici on either side. `serve` is what the node:http
 * server runs for each request. The body is in memory already (a string: FormData uploads go over
 * the network instead), so the request is its fields and that body, complete.
 */
export function answerInProcess(serve: (req: MockIncoming, res: MockOutgoing) => Promise<void>, url: URL, init: TransportRequest): Promise<TransportResponse> {
  if (init.body !== undefined && typeof init.body !== 'string')
    throw new TypeError('in-process requests carry a string body (multipart goes over the network)');
  const body = Buffer.from(init.body ?? '');
  const headers: IncomingHttpHeaders = { host: url.host };
  for (const [name, value] of Object.entries(init.headers)) headers[name.toLowerCase()] = value;
  if (init.body !== undefined) headers['content-length'] = String(body.length);
  // the body is here whole: readBody takes it as it is, and a route that reads its own gets a stream of it
  // (bodyStream): no stream is made for the others (node:stream and its modules stay unloaded)
  const req = Object.assign(new EventEmitter(), {
    method: init.method,
    url: `${url.pathname}${url.search}`,
    headers,
    complete: true,
    [WHOLE_BODY]: body,
  }) as unknown as MockIncoming;
  return new Promise<TransportResponse>((resolve, reject) => {
    // HttpClient's `abort` where it gives one: reading `signal` would make an AbortSignal, and listening to it
    // run Node's EventTarget code for the first time (about 1.8 M instructions of a short command)
    const abort = init.abort;
    if (abort ? abort.aborted : init.signal.aborted) return reject(abortReason(abort ? abort.reason : init.signal.reason));
    let unwatch = (): void => undefined;
    const res = new InProcessResponse((answer) => {
      unwatch();
      if (!answer) return reject(Object.assign(new Error('the in-process mock closed the request without an answer'), { code: 'UND_ERR_SOCKET' }));
      // as over HTTP, a HEAD answer carries the headers of the GET and no body
      resolve({ statusCode: answer.status, headers: answer.headers, body: textBody(init.method === 'HEAD' ? '' : answer.body) });
    });
    // the client gave up (its deadline, Ctrl-C): as a closed connection does, this aborts the request's
    // own signal, so a write it started is never applied after the client was told it failed
    function onAbort() {
      reject(abortReason(abort ? abort.reason : init.signal.reason));
      res.destroy();
    }
    if (abort) unwatch = abort.onAbort(onAbort);
    else {
      init.signal.addEventListener('abort', onAbort, { once: true });
      unwatch = () => init.signal.removeEventListener('abort', onAbort);
    }
    serve(req, res).catch(reject);
  });
}

/** Why the client gave up (HttpClient aborts with a DeadlineError; anything else is wrapped). */
function abortReason(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error('the request was aborted', { cause: reason });
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The response side: what `send` writes is handed to `settle` as it is; a destroy before that settles with nothing. */
class InProcessResponse extends EventEmitter implements MockOutgoing {
  headersSent = false;
  writableFinished = false;
  private status = 200;
  private headers: Record<string, string> = {};
  private settled = false;

  constructor(private readonly settle: (answer: Answer | undefined) => void) {
    super();
  }

  writeHead(status: number, headers: Record<string, string>): this {
    this.status = status;
    this.headers = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
    this.headersSent = true;
    return this;
  }

  end(body?: string): this {
    if (this.settled) return this;
    this.settled = true;
    this.writableFinished = true;
    this.settle({ status: this.status, headers: this.headers, body: body ?? '' });
    this.emit('close');
    return this;
  }

  destroy(): this {
    if (this.settled) return this;
    this.settled = true;
    this.settle(undefined);
    this.emit('close');
    return this;
  }
}

/** A response body read once, as text or as chunks (what HttpClient reads of undici's). */
function textBody(text: string): TransportResponse['body'] {
  const bytes = Buffer.from(text);
  let read = false;
  return {
    text: () => {
      const out = read ? '' : text;
      read = true;
      return Promise.resolve(out);
    },
    destroy: () => {
      read = true;
    },
    [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
      const chunks = read || bytes.length === 0 ? [] : [bytes];
      read = true;
      return {
        next: () => {
          const value = chunks.shift();
          return Promise.resolve(value !== undefined ? { value, done: false } : { value: undefined, done: true });
        },
      };
    },
  };
}
