import type { Debug, Http } from './deps.js';
import { assertSafeTransport } from '../core/http.js';

export type UserinfoAnswer = { claims: Record<string, unknown> } | { rejected: string } | { unknown: string };

/**
 * Asks the provider's userinfo endpoint (OpenID Connect Core §5.3) about an access token: its claims,
 * `rejected` when the provider refuses the token (401/403), `unknown` when it cannot tell (no answer).
 */
export async function userinfo(ctx: Http & Debug, url: string, accessToken: string): Promise<UserinfoAnswer> {
  try {
    assertSafeTransport(new URL(url), 'auth');
    const http = await ctx.http('auth');
    const res = await http.request<Record<string, unknown>>({
      method: 'GET',
      path: url,
      auth: false,
      headers: { authorization: `Bearer ${accessToken}` },
      okStatuses: [400, 401, 403, 404],
    });
    if (res.status === 200 && res.data && typeof res.data === 'object') return { claims: res.data };
    if (res.status === 401 || res.status === 403) {
      const challenge = String(res.headers['www-authenticate'] ?? '');
      return { rejected: /error="([^"]+)"/.exec(challenge)?.[1] ?? (typeof res.data?.error === 'string' ? res.data.error : `HTTP ${res.status}`) };
    }
    return { unknown: `HTTP ${res.status}` };
  } catch (err) {
    ctx.debug(`[auth] userinfo at ${url} failed: ${(err as Error).message}`);
    return { unknown: (err as Error).message };
  }
}
