import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';

/**
 * What the pipeline reads of a request: node:http's IncomingMessage, or the in-process request of
 * the embedded mock (in-process.ts), a stream of the body with the same few fields.
 */
export interface MockIncoming extends Readable {
  method?: string;
  url?: string;
  headers: IncomingHttpHeaders;
  /** The whole body has been received. */
  complete: boolean;
}

/** What the pipeline writes of a response: node:http's ServerResponse, or the in-process one. */
export interface MockOutgoing {
  readonly headersSent: boolean;
  readonly writableFinished: boolean;
  writeHead(status: number, headers: Record<string, string>): unknown;
  end(body?: string): unknown;
  destroy(): unknown;
  once(event: 'close', listener: () => void): unknown;
}

/** A request as a mock handler sees it: parsed URL, path params, and a parsed body. */
export interface MockRequest {
  method: string;
  url: URL;
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** Parsed JSON, a form object, or undefined. Multipart bodies are parsed by the handler from rawBody. */
  body: unknown;
  rawBody: Buffer;
  contentType: string;
  /** A route with `streamBody`: the unread request body (rawBody is then empty). */
  stream?: import('node:stream').Readable;
  /** Filled in by the service's authenticate step. */
  auth?: unknown;
}

/** Path parameter `name` of the route (`:name`): the router sets every parameter of the path it matched. */
export function pathParam(req: MockRequest, name: string): string {
  const v = req.params[name];
  if (v === undefined) throw new Error(`the route has no parameter :${name}`);
  return v;
}

export interface MockReply {
  status: number;
  json?: unknown;
  html?: string;
  text?: string;
  headers?: Record<string, string>;
}

/**
 * Thrown by handlers; the service's `errorReply` turns it into that service's own error shape. `headers`
 * go with the reply whatever its shape (a 405's Allow, a bearer challenge).
 */
export class MockError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const reply = {
  json: (status: number, json: unknown, headers?: Record<string, string>): MockReply => ({ status, json, headers }),
  ok: (json: unknown): MockReply => ({ status: 200, json }),
  created: (json: unknown): MockReply => ({ status: 201, json }),
  noContent: (): MockReply => ({ status: 204 }),
  html: (status: number, html: string, headers?: Record<string, string>): MockReply => ({ status, html, headers }),
  redirect: (location: string, status = 302): MockReply => ({ status, headers: { location } }),
};

export type Handler = (req: MockRequest) => MockReply | Promise<MockReply>;
