import type { Readable } from 'node:stream';
import { MockError, type MockIncoming } from './http.js';

/** A route without a limit of its own accepts bodies up to this many bytes. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/** The deepest JSON nesting a request body may have (real payloads stay far below it). */
export const DEFAULT_MAX_JSON_DEPTH = 64;

/** Marks a JSON body that does not parse: the service answers 400 after authenticating the caller. */
export const PARSE_FAILED = Symbol('parse-failed');

export function tooLarge(max: number, declared?: number): MockError {
  return new MockError(
    413,
    'too_large',
    declared === undefined ? `request body is larger than ${max} bytes` : `request body is larger than ${max} bytes (Content-Length: ${declared})`,
  );
}

/**
 * Refuses a declared Content-Length over the limit before anything is read, so a client that declares
 * 100 GB and sends 2 bytes gets its 413 at once instead of a server waiting for the rest.
 */
export function checkDeclaredLength(req: MockIncoming, max: number): void {
  const raw = req.headers['content-length'];
  if (raw === undefined) return;
  const declared = Number(raw);
  if (Number.isFinite(declared) && declared > max) throw tooLarge(max, declared);
}

/**
 * The body a request from this very process carries whole (in-process.ts): read as it is, not through its
 * stream's events (a stream of one chunk still takes several turns of the event loop and its machinery).
 */
export const WHOLE_BODY = Symbol('opsctl.mock.whole-body');

/**
 * The body of a request whose route reads its own (`streamBody`): node:http's request itself, or a stream of
 * the whole body a request from this very process carries (made only then).
 */
export function bodyStream(req: MockIncoming): Readable {
  const whole = (req as MockIncoming & { [WHOLE_BODY]?: Buffer })[WHOLE_BODY];
  if (!whole) return req;
  return process.getBuiltinModule('node:stream').Readable.from(whole.length ? [whole] : [], { objectMode: false });
}

/** Reads the whole body, failing with 413 as soon as it passes `max` bytes (the rest is left unread). */
export function readBody(req: MockIncoming, max: number): Promise<Buffer> {
  const whole = (req as MockIncoming & { [WHOLE_BODY]?: Buffer })[WHOLE_BODY];
  if (whole) return whole.length > max ? Promise.reject(tooLarge(max)) : Promise.resolve(whole);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        cleanup();
        req.pause();
        reject(tooLarge(max));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(new MockError(400, 'bad_request', `the request body could not be read: ${err.message}`));
    };
    const onClose = () => {
      cleanup();
      reject(new MockError(400, 'bad_request', 'the client closed the connection before sending the whole body'));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/** True when JSON text nests objects/arrays deeper than `max` (a linear scan that skips strings). */
export function jsonTooDeep(raw: Buffer, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/**
 * A parsed body: JSON (object, array or scalar), a form as a prototype-free object, or undefined
 * (empty, multipart, or a type the mock does not parse). Malformed JSON sent as JSON is PARSE_FAILED;
 * JSON nested deeper than `maxDepth` is refused with 400.
 */
export function parseBody(raw: Buffer, contentType: string, maxDepth: number): unknown {
  if (raw.length === 0) return undefined;
  if (contentType.includes('application/x-www-form-urlencoded')) {
    const form = Object.create(null) as Record<string, string>;
    for (const [k, v] of new URLSearchParams(raw.toString('utf8'))) form[k] = v;
    return form;
  }
  if (contentType.includes('multipart/')) return undefined;
  if (contentType.includes('json') || contentType === '' || contentType.includes('text/plain')) {
    if (jsonTooDeep(raw, maxDepth)) {
      throw new MockError(400, 'too_deep', `request body JSON nests deeper than ${maxDepth} levels`);
    }
    try {
      return JSON.parse(raw.toString('utf8'));
    } catch {
      return contentType.includes('json') ? PARSE_FAILED : undefined;
    }
  }
  return undefined;
}
