/**
 * How `opsctl api --paginate` finds the next page of a JSON answer, in the order services use:
 * 1. a `Link: <url>; rel="next"` header (GitHub, RFC 8288);
 * 2. a `next` field holding a path or URL (the tracker's search: `/api/v3/search/stories?…&next=…`),
 *    a page number (the tracker's `/api/v3/epics/paginated`: sent back as `page`, null on the last page),
 *    or a bare cursor (sent back as the `next` query parameter);
 * 3. a `nextPageToken` (Google APIs, the label service), sent back as `pageToken` with the same parameters;
 * 4. a cursor in `next_cursor`, `nextCursor` or `response_metadata.next_cursor`, sent back as `cursor`.
 * An empty or null value means the last page.
 */
export function nextPage(current: URL, headers: Record<string, string | string[] | undefined>, data: unknown): URL | undefined {
  const link = linkNext(headers.link);
  if (link) return new URL(link, current);
  if (!data || typeof data !== 'object' || Array.isArray(data)) return undefined;
  const body = data as Record<string, unknown>;
  const next = body.next;
  if (typeof next === 'string' && next) {
    if (next.startsWith('/') || /^https?:\/\//.test(next)) return new URL(next, current);
    return withParam(current, 'next', next);
  }
  if (typeof next === 'number' && Number.isInteger(next) && next > 0) return withParam(current, 'page', String(next));
  const token = body.nextPageToken;
  if (typeof token === 'string' && token) return withParam(current, 'pageToken', token);
  const meta = body.response_metadata as Record<string, unknown> | undefined;
  const cursor = [body.next_cursor, body.nextCursor, meta && typeof meta === 'object' ? meta.next_cursor : undefined].find(
    (c): c is string => typeof c === 'string' && c !== '',
  );
  return cursor ? withParam(current, 'cursor', cursor) : undefined;
}

function withParam(url: URL, name: string, value: string): URL {
  const u = new URL(url);
  u.searchParams.set(name, value);
  return u;
}

/** The `rel="next"` target of a Link header, if any. */
export function linkNext(value: string | string[] | undefined): string | undefined {
  const text = Array.isArray(value) ? value.join(', ') : value;
  if (!text) return undefined;
  for (const m of text.matchAll(/<([^>]*)>((?:\s*;\s*[^;,]+)*)/g)) {
    const params = m[2] ?? '';
    if (/;\s*rel\s*=\s*"?(?:[^";,]*\s)?next(?=[\s";,]|$)/i.test(params)) return m[1];
  }
  return undefined;
}

/** Names of the list in a page object, most likely first (the label service's own names come from its answers: labels, labelPermissions…). */
const ITEM_KEYS = ['data', 'items', 'results', 'values', 'nodes'];

/**
 * The items of one page, for `--slurp`: a page that is an array is its items; an object's items are its
 * `data`/`items`/`results` list, else its only list (`labels`, `labelLocks`). A page with no such list
 * counts as one item.
 */
export function pageItems(page: unknown): unknown[] {
  if (Array.isArray(page)) return page;
  if (!page || typeof page !== 'object') return page === undefined ? [] : [page];
  const body = page as Record<string, unknown>;
  for (const key of ITEM_KEYS) if (Array.isArray(body[key])) return body[key] as unknown[];
  const lists = Object.values(body).filter((v) => Array.isArray(v));
  return lists.length === 1 ? (lists[0] as unknown[]) : [page];
}
