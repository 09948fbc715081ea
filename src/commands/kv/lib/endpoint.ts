import { parseUserUrl } from '../../../core/url.js';

/** "127.0.0.1:2379" → "http://127.0.0.1:2379"; the URL is checked. */
export function normalizeEndpoint(e: string, flag = '--endpoints'): string {
  const s = e.trim().replace(/\/+$/, '');
  const url = /^[a-z]+:\/\//i.test(s) ? s : `http://${s}`;
  parseUserUrl(url, flag, { hint: 'write it as http://HOST:PORT or https://HOST:PORT (comma-separated for several)' });
  return url;
}
