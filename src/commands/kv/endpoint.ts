import { UsageError } from '../../core/errors.js';

/** "127.0.0.1:2379" → "http://127.0.0.1:2379"; the URL is checked. */
export function normalizeEndpoint(e: string, flag = '--endpoints'): string {
  const s = e.trim().replace(/\/+$/, '');
  const url = /^[a-z]+:\/\//i.test(s) ? s : `http://${s}`;
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
  } catch {
    throw new UsageError(`${flag}: "${e}" is not a client URL`, { field: flag, hint: 'write it as http://HOST:PORT (comma-separated for several)' });
  }
  return url;
}
