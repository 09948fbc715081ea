import { defaultDispatcher } from '../core/http.js';
import { request as lite } from '../core/undici-lite.js';

const request = (url: string | URL, opts: { method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string } = {}) =>
  lite(new URL(url), { method: opts.method ?? 'GET', headers: opts.headers, body: opts.body, dispatcher: defaultDispatcher() });

/**
 * For `opsctl demo` and tests only, against the local mock authorization server: does what the user's
 * browser would do — opens the authorization URL, submits the consent form as `email` granting every
 * requested scope, and follows the redirect to opsctl's loopback listener. Never used with a real server.
 */
export async function submitConsent(authUrl: string, email: string): Promise<void> {
  const page = await request(authUrl);
  const html = await page.body.text();
  if (page.statusCode !== 200) throw new Error(`the authorization page answered ${page.statusCode}: ${/id="error-code">([^<]+)</.exec(html)?.[1] ?? 'error'}`);
  const id = /name="request" value="([^"]+)"/.exec(html)?.[1];
  const sub = new RegExp(`name="user" value="([^"]+)" id="[^"]*" data-email="${email.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"`).exec(html)?.[1];
  if (!id || !sub) throw new Error(`no consent form for ${email} on the authorization page`);
  const form = new URLSearchParams({ request: id, user: sub, action: 'allow' });
  for (const m of html.matchAll(/name="scope" value="([^"]+)"/g)) form.append('scope', m[1].replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n))));
  const post = await request(new URL('/o/oauth2/v2/auth/consent', authUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
  });
  await post.body.dump();
  const location = post.headers.location;
  if (post.statusCode !== 302 || typeof location !== 'string') throw new Error(`the consent form answered ${post.statusCode}`);
  const back = await request(location.split('#')[0]);
  await back.body.dump();
}
