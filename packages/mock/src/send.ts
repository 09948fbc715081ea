import { isOpsError } from '@opsctl/shared/errors.js';
import { MockError, type MockIncoming, type MockOutgoing, type MockReply } from './http.js';

/**
 * What a thrown error means for the client. A MockError is the service's own answer; a URIError comes
 * from decoding the client's percent-escapes (400); anything else is a bug of the mock (500, logged).
 */
export function toMockError(err: unknown, where: string): MockError {
  if (err instanceof MockError) return err;
  // The mock's own storage (its state file, directory or lock) refused: its message and fix, not a bug.
  if (isOpsError(err)) return new MockError(503, 'local_storage', err.message, err.hint ? { hint: err.hint } : {});
  if (err instanceof URIError) return new MockError(400, 'bad_request', `malformed percent-encoding in the request: ${err.message}`);
  return new MockError(500, 'internal', `mock ${where} failed: ${(err as Error)?.message ?? String(err)}`);
}

/** Streamed routes drain (read and drop) up to this many times their limit after an early reply. */
export const DRAIN_FACTOR = 4;
/** Requests whose unread body Node's server reads and drops after the reply (keep-alive) instead of closing. */
export const drainAfterReply = new WeakSet<MockIncoming>();

/** True when the request declared a body that has not been read to its end. */
function bodyPending(req: MockIncoming): boolean {
  if (req.complete) return false;
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

export function send(req: MockIncoming, res: MockOutgoing, out: MockReply): void {
  const headers: Record<string, string> = { ...(out.headers ?? {}) };
  // Answered before the body was read (413 on the declared length, 404, 401…): close the connection
  // after this reply rather than wait for, or misread, the rest of the body.
  if (bodyPending(req) && !drainAfterReply.has(req)) headers.connection = 'close';
  let body: string | undefined;
  if (out.json !== undefined) {
    headers['content-type'] ??= 'application/json; charset=utf-8';
    body = JSON.stringify(out.json);
  } else if (out.html !== undefined) {
    headers['content-type'] ??= 'text/html; charset=utf-8';
    body = out.html;
  } else if (out.text !== undefined) {
    headers['content-type'] ??= 'text/plain; charset=utf-8';
    body = out.text;
  }
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
  res.writeHead(out.status, headers);
  res.end(body);
}
