/** Header and parameter names whose values never reach a log. */
const SECRET_HEADERS = new Set(['authorization', 'tracker-token', 'shortcut-token', 'cookie', 'set-cookie', 'proxy-authorization']);
const SECRET_PARAMS = new Set([
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'client_secret',
  'code',
  'code_verifier',
  'device_code',
  'password',
  'secret',
]);

export const REDACTED = '[redacted]';

export function redactHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined) continue;
    out[k] = SECRET_HEADERS.has(k.toLowerCase()) ? REDACTED : Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

export function redactUrl(raw: string): string {
  try {
    const u = new URL(raw);
    for (const key of [...u.searchParams.keys()]) {
      if (SECRET_PARAMS.has(key.toLowerCase())) u.searchParams.set(key, REDACTED);
    }
    return u.toString();
  } catch {
    return raw;
  }
}

/** Redacts secret fields in a JSON or form body (for --debug). */
export function redactBody(body: unknown): unknown {
  if (typeof body === 'string') {
    if (body.includes('=') && !body.trimStart().startsWith('{')) {
      const params = new URLSearchParams(body);
      for (const key of [...params.keys()]) if (SECRET_PARAMS.has(key.toLowerCase())) params.set(key, REDACTED);
      return params.toString();
    }
    return body;
  }
  if (Array.isArray(body)) return body.map(redactBody);
  if (body && typeof body === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(body)) out[k] = SECRET_PARAMS.has(k.toLowerCase()) ? REDACTED : redactBody(v);
    return out;
  }
  return body;
}

/** 127.0.0.0/8, ::1 and localhost. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}
