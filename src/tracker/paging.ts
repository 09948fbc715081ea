import type { HttpClient, Query } from '../core/http.js';
import type { Paging } from './resources.js';

export interface PageOptions {
  /** Fetch every page. */
  all?: boolean;
  /** Stop after this many records. */
  limit?: number;
  /** Told after each page (for progress on long lists). */
  onPage?: (fetched: number, total?: number) => void;
}

export interface Fetched {
  items: unknown[];
  /** True when the server has more than was fetched: the caller must say so. */
  more: boolean;
  total?: number;
  /** True when every page was followed but the server stopped before `total` (a search returns at most 1000). */
  capped?: boolean;
}

/**
 * Fetches a list the way its endpoint pages. Without `all` or `limit` a paginated endpoint gives its
 * first page; `more` tells the caller that the list stopped early, so it never does so silently.
 */
export async function fetchList(http: HttpClient, path: string, query: Query, paging: Paging | undefined, opts: PageOptions = {}): Promise<Fetched> {
  const limit = opts.limit ?? Infinity;
  const wantAll = opts.all || Number.isFinite(limit);
  const items: unknown[] = [];
  if (!paging) {
    const got = await http.get<unknown>(path, query);
    const list = Array.isArray(got) ? got : [got];
    return { items: list.slice(0, Math.min(limit, list.length)), more: list.length > limit, total: list.length };
  }
  if (paging.kind === 'page') {
    let page = 1;
    // one page size throughout, so that page numbers keep meaning the same records
    const pageSize = wantAll ? Math.min(paging.max, Number.isFinite(limit) ? limit : paging.max) : undefined;
    for (;;) {
      const got = await http.get<{ data: unknown[]; next: number | null; total: number }>(path, { ...query, page, page_size: pageSize });
      items.push(...got.data);
      opts.onPage?.(items.length, got.total);
      const done = got.next === null || got.next === undefined || got.data.length === 0;
      if (done) return finish(items, limit, { more: false, total: got.total });
      if (!wantAll || items.length >= limit) return finish(items, limit, { more: true, total: got.total });
      page = got.next as number;
    }
  }
  if (paging.kind === 'offset') {
    let offset = 0;
    for (;;) {
      const size = Math.min(paging.max, Number.isFinite(limit) ? limit - items.length : paging.max);
      const got = await http.get<unknown[]>(path, { ...query, limit: size, offset });
      items.push(...got);
      opts.onPage?.(items.length);
      if (got.length < size) return finish(items, limit, { more: false });
      offset += got.length;
      if (!wantAll || items.length >= limit) {
        // one record more tells whether the list really goes on
        const peek = await http.get<unknown[]>(path, { ...query, limit: 1, offset });
        return finish(items, limit, { more: peek.length > 0 });
      }
    }
  }
  // `next`: the server hands back the path and query of the following page
  let got = await http.get<{ data: unknown[]; next: string | null; total: number }>(path, {
    ...query,
    page_size: wantAll ? Math.min(paging.max, Number.isFinite(limit) ? limit : paging.max) : query.page_size,
  });
  for (;;) {
    items.push(...got.data);
    opts.onPage?.(items.length, got.total);
    if (!got.next) {
      const out = finish(items, limit, { more: items.length < got.total, total: got.total });
      // no next page although total says more: the server caps what it hands out, and --all cannot help
      return items.length < got.total && items.length < limit ? { ...out, capped: true } : out;
    }
    if (!wantAll || items.length >= limit) return finish(items, limit, { more: true, total: got.total });
    got = await http.get(got.next);
  }
}

function finish(items: unknown[], limit: number, { more, total }: { more: boolean; total?: number }): Fetched {
  if (items.length > limit) return { items: items.slice(0, limit), more: true, total };
  return { items, more, total };
}

/** The line a list prints when the server itself stopped handing out records (a search's cap). */
export function cappedNotice(shown: number, what: string, total?: number): string {
  return `showing ${shown}${total !== undefined ? ` of ${total}` : ''} ${what}: the service returns no more for one search; narrow --query to reach the rest`;
}

/** The line a list prints when it stopped before the end. */
export function moreNotice(shown: number, what: string, total?: number): string {
  return `showing ${shown}${total !== undefined ? ` of ${total}` : ''} ${what}; more exist: pass --all for every page or --limit N`;
}
