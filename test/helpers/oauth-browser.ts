import { request } from 'undici';

export interface ConsentChoice {
  /** Scopes to tick (default: every checkbox). */
  scopes?: string[];
  /** The account's e-mail (default: the preselected one). */
  email?: string;
  action?: 'allow' | 'deny';
  accessDuration?: number;
  userAgent?: string;
}

export interface BrowserResult {
  /** Status of the authorization page. */
  pageStatus: number;
  page: string;
  /** Where the server redirected after the consent form (undefined when it showed a page instead). */
  location?: string;
  consentStatus?: number;
  consentPage?: string;
}

/**
 * Plays the user's browser over HTTP: opens the authorization URL, reads the consent page, submits the
 * form with the chosen account and scopes, and returns where the server redirects.
 */
export async function playBrowser(authUrl: string, choice: ConsentChoice = {}): Promise<BrowserResult> {
  const headers = { 'user-agent': choice.userAgent ?? 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120 Safari/537.36' };
  const res = await request(authUrl, { headers });
  const page = await res.body.text();
  if (res.statusCode !== 200) return { pageStatus: res.statusCode, page };
  const id = /name="request" value="([^"]+)"/.exec(page)?.[1];
  if (!id) throw new Error('no consent form on the page');
  const accounts = [...page.matchAll(/name="user" value="([^"]+)" id="[^"]*" data-email="([^"]+)"( checked)?/g)];
  const account = choice.email ? accounts.find((a) => a[2] === choice.email) : (accounts.find((a) => a[3]) ?? accounts[0]);
  if (!account) throw new Error(`no account ${choice.email} on the page`);
  const boxes = [...page.matchAll(/name="scope" value="([^"]+)"/g)].map((m) => m[1]!.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n))));
  const form = new URLSearchParams({ request: id, user: account[1]!, action: choice.action ?? 'allow' });
  for (const s of choice.scopes ?? boxes) form.append('scope', s);
  if (choice.accessDuration) form.set('access_duration', String(choice.accessDuration));
  const origin = new URL(authUrl).origin;
  const post = await request(`${origin}/o/oauth2/v2/auth/consent`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
    body: form.toString(),
  });
  const body = await post.body.text();
  const location = post.headers.location as string | undefined;
  return { pageStatus: 200, page, location, consentStatus: post.statusCode, consentPage: body };
}

/** Follows the redirect to the app's loopback listener like a browser (the fragment stays in the browser). */
export async function followRedirect(location: string): Promise<{ status: number; body: string }> {
  const res = await request(location.split('#')[0]!);
  return { status: res.statusCode, body: await res.body.text() };
}

/** POSTs a form to the token endpoint and returns the status, JSON and headers. */
export async function postForm(url: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: text ? JSON.parse(text) : undefined, headers: res.headers };
}
