/**
 * The bodies of http.ts: a request's encoded by its kind; an answer's read whole, up to a limit or as it
 * streams, parsed by its type, its server's message in words.
 */
import type { FormData } from 'undici';

/** A transport's body (http.ts's TransportResponse['body']). */
export type AnswerBody = AsyncIterable<Uint8Array> & { text(): Promise<string>; destroy(): void };

/** The body parsed: JSON where it says so or looks so, else the text; nothing for an empty body. */
export function parseBody(raw: string, contentType: string | string[] | undefined): unknown {
  if (raw === '') return undefined;
  const ct = String(contentType ?? '');
  if (ct.includes('json') || /^[[{]/.test(raw.trimStart())) {
    try {
      return JSON.parse(raw);
    } catch {
      return raw;
    }
  }
  return raw;
}

/** The server's own message, whichever service's error shape it uses. */
export function serverMessage(body: unknown, status: number): string {
  if (body && typeof body === 'object') {
    const b = body as Record<string, unknown>;
    if (b.error && typeof b.error === 'object') {
      const e = b.error as Record<string, unknown>;
      if (typeof e.message === 'string')
        return (typeof e.status === 'string' || typeof e.status === 'number') && e.status ? `${e.status}: ${e.message}` : e.message;
    }
    if (typeof b.error === 'string' && typeof b.error_description === 'string') return `${b.error}: ${b.error_description}`;
    if (typeof b.message === 'string') return b.message;
    if (typeof b.error === 'string') return b.error;
  }
  if (typeof body === 'string' && body.trim()) return truncate(body.trim());
  return `request failed with status ${status}`;
}

export function tryJson(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
}

export function truncate(s: string, n = 500): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

/** The body as text, or (with a limit) its first `limit` bytes and whether more were coming. */
export async function readBody(body: AnswerBody, limit?: number): Promise<{ raw: string; bytes: number; truncated: boolean }> {
  if (limit === undefined) {
    const raw = await body.text();
    return { raw, bytes: Buffer.byteLength(raw), truncated: false };
  }
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for await (const chunk of body) {
    bytes += chunk.length;
    if (bytes > limit) {
      body.destroy();
      return { raw: Buffer.concat(chunks).toString('utf8'), bytes, truncated: true };
    }
    chunks.push(chunk);
  }
  return { raw: Buffer.concat(chunks).toString('utf8'), bytes, truncated: false };
}

/** A request's body and its content type: JSON, a form (a list repeats the field), or multipart form data (undici sets its type). */
export function requestBody(req: { json?: unknown; form?: Record<string, string | string[] | undefined>; formData?: FormData }): {
  body?: string | FormData;
  contentType?: string;
} {
  if (req.json !== undefined) return { body: JSON.stringify(req.json), contentType: 'application/json' };
  if (req.form) {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(req.form)) for (const one of v === undefined ? [] : [v].flat()) params.append(k, one);
    return { body: params.toString(), contentType: 'application/x-www-form-urlencoded' };
  }
  return req.formData ? { body: req.formData } : {};
}

/** BODY as it streams, ARM called as it starts and with each piece (a deadline for each wait). */
export async function* rearming(body: AsyncIterable<Uint8Array>, arm: () => void): AsyncIterable<Uint8Array> {
  arm();
  for await (const piece of body) {
    arm();
    yield piece;
  }
}

/** Ends a body nobody reads any more: the error its end raises (undici's "Request aborted") has no reader to reach, and must not crash the process. */
export function discard(body: AnswerBody): void {
  (body as Partial<Pick<NodeJS.EventEmitter, 'on'>>).on?.('error', () => undefined);
  body.destroy();
}
