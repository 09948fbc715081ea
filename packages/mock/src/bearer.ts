/**
 * A `WWW-Authenticate: Bearer` challenge as RFC 6750 §3 writes it, for every bearer-protected resource of
 * the mock (the data API, the label service, userinfo). No `error` when the request carried no credentials
 * (§3.1: the resource server "SHOULD NOT include an error code or other error information"); else
 * `invalid_request` (400), `invalid_token` (401) or `insufficient_scope` (403, with the `scope` needed).
 */
export function bearerChallenge(realm: string, p: { error?: string; description?: string; scope?: string } = {}): string {
  const quote = (v: string) => `"${v.replace(/["\\]/g, '')}"`;
  const attrs = [`realm=${quote(realm)}`];
  if (p.error) attrs.push(`error=${quote(p.error)}`);
  if (p.description) attrs.push(`error_description=${quote(p.description)}`);
  if (p.scope) attrs.push(`scope=${quote(p.scope)}`);
  return `Bearer ${attrs.join(', ')}`;
}
