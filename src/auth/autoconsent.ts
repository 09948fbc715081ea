import { NetworkError, OpsError, UsageError } from '../core/errors.js';
import { itemAt } from '../core/arrays.js';
import type { HttpClient, RequestOptions } from '../core/http.js';

export interface ConsentOptions {
  /**
   * The client of the authorization server (Context.http('auth'): core/http's, with --debug redacted and, for the
   * embedded mock, its own storage error behind a 503 thrown as it is).
   */
  http: Pick<HttpClient, 'request'>;
  /** A server inside this process: its own storage error behind a 503, shown as it is (Context.inProcessServerError). */
  localError?: () => OpsError | undefined;
}

/**
 * For `opsctl demo` and tests only, against the local mock authorization server: does what the user's
 * browser would do — opens the authorization URL, submits the consent form as `email` granting every
 * requested scope, and follows the redirect to opsctl's loopback listener. Never used with a real server.
 *
 * Fails with what a person can act on: an unreachable server names its address (exit 1); the mock's
 * own storage error is shown as it is; only an account with no consent form is a usage error (exit 2).
 */
export async function submitConsent(authUrl: string, email: string, opts: ConsentOptions): Promise<void> {
  const origin = new URL(authUrl).origin;
  // every answer as it is (a page, a redirect not followed, an error page), its body as text
  const request = async (url: string | URL, init: Pick<RequestOptions, 'method' | 'form'> = {}) => {
    try {
      const res = await opts.http.request<string>({
        ...init,
        path: new URL(url).href,
        auth: false,
        anyStatus: true,
        text: true,
        headers: { accept: 'text/html' },
      });
      return { statusCode: res.status, headers: res.headers, html: res.data };
    } catch (err) {
      if (!(err instanceof NetworkError)) throw err;
      throw new NetworkError(`--consent-as: cannot reach the authorization server ${origin}: ${(err.cause as Error | undefined)?.message ?? err.message}`, {
        hint: `check that it is up and that the auth endpoint is right (opsctl config get auth; OPSCTL_AUTH_URL), or sign in with a browser`,
        cause: err.cause,
      });
    }
  };
  const refused = (what: string, status: number, html: string) => {
    const local = status === 503 ? opts.localError?.() : undefined;
    if (local) return local;
    const code = /id="error-code">([^<]+)</.exec(html)?.[1] ?? 'error';
    const description = /id="error-description">([^<]*)</.exec(html)?.[1];
    const said = description ? ` (${unescapeHtml(description)})` : '';
    return new OpsError(`--consent-as: ${what} of ${origin} answered ${status}: ${unescapeHtml(code)}${said}`, 1, {
      code: 'consent_failed',
      hint:
        status >= 500
          ? 'check the server (opsctl mock serve prints its errors), then run opsctl login again'
          : 'check the client settings (opsctl config get client_id), then run opsctl login again',
    });
  };
  const page = await request(authUrl);
  const html = page.html;
  if (page.statusCode !== 200) throw refused('the authorization page', page.statusCode, html);
  const id = /name="request" value="([^"]+)"/.exec(html)?.[1];
  const sub = new RegExp(`name="user" value="([^"]+)" id="[^"]*" data-email="${email.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"`).exec(html)?.[1];
  if (!id || !sub)
    throw new UsageError(`--consent-as: no consent form for ${email} on the authorization page`, {
      field: 'consent-as',
      hint: 'use a seeded account such as alice@example.com',
    });
  const scope = [...html.matchAll(/name="scope" value="([^"]+)"/g)].map((m) => itemAt(m, 1).replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n))));
  const post = await request(new URL('/o/oauth2/v2/auth/consent', authUrl), { method: 'POST', form: { request: id, user: sub, action: 'allow', scope } });
  const location = post.headers.location;
  if (post.statusCode !== 302 || typeof location !== 'string') throw refused('the consent form', post.statusCode, post.html);
  // the redirect to opsctl's own loopback listener, as the browser would follow it
  await request(itemAt(location.split('#'), 0));
}

/** The text of an HTML text node of the mock's pages (escapeHtml's five entities and numeric ones). */
function unescapeHtml(text: string): string {
  return text
    .replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n)))
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}
