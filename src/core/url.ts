import { UsageError } from './errors.js';

/** What a valid URL looks like, for every message about a URL the user gave. */
export const URL_EXAMPLE = 'https://api.example.com or http://127.0.0.1:8080 (scheme, host, optional port 1-65535, optional path)';

/**
 * A URL the user gave (an argument, a flag, a config value, an OPSCTL_*_URL variable), parsed: an
 * http(s) URL or a usage error (exit 2) naming where it came from and what a valid one looks like.
 * `where` is the argument, flag or variable ("<path>", "--endpoints", "OPSCTL_API_URL").
 */
export function parseUserUrl(value: string, where: string, opts: { hint?: string } = {}): URL {
  const problem = urlProblem(value);
  if (problem)
    throw new UsageError(`${where}: "${value}" ${problem}`, { code: 'invalid_url', field: where, hint: opts.hint ?? `write it like ${URL_EXAMPLE}` });
  return new URL(value);
}

/** Why `value` is not a usable http(s) URL, or undefined when it is one. */
export function urlProblem(value: string): string | undefined {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    const port = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*:([^/?#@]*)(?:[/?#]|$)/i.exec(value)?.[1];
    if (port !== undefined && !/^\d{0,5}$/.test(port)) return `is not a valid URL: the port "${port}" is not a number`;
    if (port !== undefined && Number(port) > 65535) return `is not a valid URL: the port ${port} is over 65535`;
    return /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? 'is not a valid URL' : 'is not a valid URL (no scheme: start it with https:// or http://)';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `is not an http(s) URL (scheme ${u.protocol.slice(0, -1)})`;
  if (!u.hostname) return 'is not a valid URL: it has no host';
  return undefined;
}
