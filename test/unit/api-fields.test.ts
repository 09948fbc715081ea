import { describe, expect, it } from 'vitest';
import { fieldsBody, fieldsQuery, type FieldArg } from '../../src/commands/api/lib/fields.js';
import { linkNext, nextPage, pageItems } from '../../src/commands/api/lib/paginate.js';

const F = (text: string): FieldArg => ({ raw: false, text });
const f = (text: string): FieldArg => ({ raw: true, text });
const noFiles = (source: string) => Promise.resolve(`<${source}>`);

describe('opsctl api fields (gh api -f / -F)', () => {
  it('-F types numbers, booleans and null; -f keeps text; nested keys and arrays build objects', async () => {
    const body = await fieldsBody(
      [
        F('n=42'),
        F('neg=-7'),
        F('big=9007199254740993'),
        F('t=true'),
        F('z=null'),
        f('s=42'),
        F('a[b]=c'),
        F('a[d][e]=1'),
        F('xs[]=1'),
        F('xs[]=two'),
        F('empty[]'),
        F('file=@x.md'),
      ],
      noFiles,
    );
    expect(JSON.parse(JSON.stringify(body))).toEqual({
      n: 42,
      neg: -7,
      big: '9007199254740993',
      t: true,
      z: null,
      s: '42',
      a: { b: 'c', d: { e: 1 } },
      xs: [1, 'two'],
      empty: [],
      file: '<x.md>',
    });
  });

  it('refuses what cannot be built, naming the flag', async () => {
    await expect(fieldsBody([F('a=1'), F('a[b]=2')], noFiles)).rejects.toThrow('-F: "a[b]": a is already a value');
    await expect(fieldsBody([F('a[][b]=1')], noFiles)).rejects.toThrow('may only come last');
    await expect(fieldsBody([f('novalue')], noFiles)).rejects.toThrow('-f: "novalue" is not key=value');
    await expect(fieldsBody([F('=x')], noFiles)).rejects.toThrow('not key=value');
    const proto = await fieldsBody([f('__proto__=x')], noFiles);
    expect(Object.keys(proto)).toEqual(['__proto__']);
  });

  it('as a query: names as typed, repeated names kept in order', async () => {
    expect({ ...(await fieldsQuery([f('q=a b'), F('types[]=story'), F('types[]=epic'), F('n=1')], noFiles)) }).toEqual({
      q: 'a b',
      'types[]': ['story', 'epic'],
      n: '1',
    });
  });
});

describe('opsctl api --paginate: the next page', () => {
  const at = new URL('http://h/api/v3/search/stories?query=x');
  it('Link rel="next", a next path, a bare next cursor, nextPageToken, next_cursor; none on the last page', () => {
    expect(linkNext('<http://h/i?page=2>; rel="next", <http://h/i?page=9>; rel="last"')).toBe('http://h/i?page=2');
    expect(linkNext('<http://h/i?page=9>; rel="last", <http://h/i?page=2>; rel="prev next"')).toBe('http://h/i?page=2');
    expect(linkNext('<http://h/i?page=9>; rel="nextish"')).toBeUndefined();
    expect(nextPage(at, {}, { next: '/api/v3/search/stories?query=x&next=abc' })?.href).toBe('http://h/api/v3/search/stories?query=x&next=abc');
    expect(nextPage(at, {}, { next: 'abc' })?.searchParams.get('next')).toBe('abc');
    const tok = nextPage(new URL('http://h/v2beta/labels?view=FULL&pageToken=old'), {}, { labels: [], nextPageToken: 'T2' });
    expect(tok?.search).toBe('?view=FULL&pageToken=T2');
    expect(nextPage(at, {}, { response_metadata: { next_cursor: 'c1' } })?.searchParams.get('cursor')).toBe('c1');
    expect(nextPage(at, {}, { data: [], next: null })).toBeUndefined();
    expect(nextPage(at, {}, { nextPageToken: '' })).toBeUndefined();
  });

  it("a page's items: an array, its data/items list, its only list, else the page itself", () => {
    expect(pageItems([1, 2])).toEqual([1, 2]);
    expect(pageItems({ data: [1], next: null, total: 1 })).toEqual([1]);
    expect(pageItems({ labels: [1, 2], nextPageToken: 'x' })).toEqual([1, 2]);
    expect(pageItems({ a: 1 })).toEqual([{ a: 1 }]);
  });
});
