import { describe, expect, it } from 'vitest';
import type { HttpClient } from '../../src/core/http.js';
import { cappedNotice, fetchList, moreNotice } from '../../src/tracker/paging.js';

/** A fake HttpClient.get over `n` records, paged the three ways the tracker pages. */
function fake(n: number) {
  const records = Array.from({ length: n }, (_, i) => ({ id: i + 1 }));
  const calls: Array<{ path: string; query?: Record<string, unknown> }> = [];
  const http = {
    async get(path: string, query?: Record<string, any>) {
      calls.push({ path, query });
      if (path === '/plain') return records;
      if (path === '/page') {
        const size = query?.page_size ?? 10;
        const page = query?.page ?? 1;
        return { data: records.slice((page - 1) * size, page * size), next: page * size < n ? page + 1 : null, total: n };
      }
      if (path === '/offset') return records.slice(query!.offset, query!.offset + query!.limit);
      // next: a path with the offset in it
      const url = new URL(path, 'http://x');
      const offset = Number(url.searchParams.get('o') ?? 0);
      const size = Number(url.searchParams.get('page_size') ?? query?.page_size ?? 25);
      return { data: records.slice(offset, offset + size), next: offset + size < n ? `/next?o=${offset + size}&page_size=${size}` : null, total: n };
    },
  } as unknown as HttpClient;
  return { http, calls };
}

describe('fetchList', () => {
  it('plain arrays: everything, or --limit with a note that more exist', async () => {
    expect(await fetchList(fake(5).http, '/plain', {}, undefined)).toEqual({ items: expect.any(Array), more: false, total: 5 });
    const limited = await fetchList(fake(5).http, '/plain', {}, undefined, { limit: 2 });
    expect(limited).toMatchObject({ more: true, total: 5 });
    expect(limited.items).toHaveLength(2);
  });

  it('page/page_size: first page by default (more: true), every page with --all at the largest page size', async () => {
    const f = fake(600);
    const first = await fetchList(f.http, '/page', {}, { kind: 'page', max: 250 });
    expect(first.items).toHaveLength(10);
    expect(first.more).toBe(true);
    const g = fake(600);
    const all = await fetchList(g.http, '/page', {}, { kind: 'page', max: 250 }, { all: true });
    expect(all.items).toHaveLength(600);
    expect(all.more).toBe(false);
    expect(g.calls.map((c) => [c.query?.page, c.query?.page_size])).toEqual([
      [1, 250],
      [2, 250],
      [3, 250],
    ]);
    const h = fake(600);
    const some = await fetchList(h.http, '/page', {}, { kind: 'page', max: 250 }, { limit: 30 });
    expect(some).toMatchObject({ more: true });
    expect(some.items).toHaveLength(30);
    expect(h.calls).toHaveLength(1);
  });

  it('limit/offset: walks the offsets, and peeks once to tell whether a limited list goes on', async () => {
    const f = fake(2500);
    const all = await fetchList(f.http, '/offset', {}, { kind: 'offset', max: 1000 }, { all: true });
    expect(all.items).toHaveLength(2500);
    expect(f.calls.map((c) => c.query?.offset)).toEqual([0, 1000, 2000]);
    const exact = await fetchList(fake(1000).http, '/offset', {}, { kind: 'offset', max: 1000 }, { limit: 1000 });
    expect(exact.more).toBe(false);
    const over = await fetchList(fake(1001).http, '/offset', {}, { kind: 'offset', max: 1000 }, { limit: 1000 });
    expect(over.more).toBe(true);
  });

  it('next links: followed to the end with --all, in order', async () => {
    const f = fake(60);
    const all = await fetchList(f.http, '/next', { query: 'x' }, { kind: 'next', max: 250 }, { all: true });
    expect(all.items.map((r: any) => r.id)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    const first = await fetchList(fake(60).http, '/next', { query: 'x' }, { kind: 'next', max: 250 });
    expect(first).toMatchObject({ more: true, total: 60 });
    expect(first.items).toHaveLength(25);
  });

  it('next links: a server that stops before total (a capped search) is reported as capped, not as "pass --all"', async () => {
    const f = fake(60);
    const get = f.http.get.bind(f.http);
    // the server hands out 40 of its 60 results, then no next link
    (f.http as any).get = async (path: string, query?: Record<string, unknown>) => {
      const page = await get<{ data: unknown[]; next: string | null; total: number }>(path, query as any);
      return page.next && Number(new URL(page.next, 'http://x').searchParams.get('o')) >= 40 ? { ...page, next: null } : page;
    };
    const all = await fetchList(f.http, '/next', { query: 'x' }, { kind: 'next', max: 20 }, { all: true });
    expect(all).toMatchObject({ more: true, capped: true, total: 60 });
    expect(all.items).toHaveLength(40);
    const done = await fetchList(fake(60).http, '/next', { query: 'x' }, { kind: 'next', max: 250 }, { all: true });
    expect(done.capped).toBeUndefined();
    expect(cappedNotice(1000, 'stories', 1500)).toContain('narrow --query');
  });

  it('says what it shows and how to get the rest', () => {
    expect(moreNotice(10, 'epics', 13)).toBe('showing 10 of 13 epics; more exist: pass --all for every page or --limit N');
  });
});
