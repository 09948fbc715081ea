import { request } from 'undici';

/** A direct HTTP call to the tracker mock: {status, body, headers}. */
export function trackerCall(mock: { url: string; trackerToken: string }) {
  return (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    request(`${mock.url}/api/v3${path}`, {
      method: method as 'GET',
      headers: { 'content-type': 'application/json', 'tracker-token': mock.trackerToken, ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    }).then(async (r) => ({ status: r.statusCode, body: (await r.body.json().catch(() => undefined)) as any, headers: r.headers }));
}
