import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { indexStats } from '../../packages/mock/src/indexes.js';
import { createMockServer } from '../../packages/mock/src/server.js';
import { FileStore, MemoryStore, StateFileError } from '../../packages/mock/src/store.js';
import { txStats } from '../../packages/mock/src/tx.js';
import type { TestState } from '../helpers/mock.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'opsctl-journal-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const journaled = (path: string, warn?: (t: string) => void) => new FileStore(path, undefined, undefined, { journal: true, warn });

describe('FileStore with a journal (mock serve --state)', () => {
  it('appends each write to PATH.journal and leaves the snapshot alone; a new store sees them all', async () => {
    const path = join(dir, 'state.json');
    const store = journaled(path);
    await store.write((s) => void (s.labels = { labels: [], items: [] }));
    const snapshot = readFileSync(path, 'utf8');
    for (let i = 0; i < 5; i++) await store.write((s: TestState) => void s.labels.items.push({ id: i }));
    expect(readFileSync(path, 'utf8')).toBe(snapshot);
    expect(readFileSync(`${path}.journal`, 'utf8').trim().split('\n')).toHaveLength(1 + 5);
    expect(await journaled(path).read((s: TestState) => s.labels.items)).toEqual([0, 1, 2, 3, 4].map((id) => ({ id })));
    // a store without the journal option (the embedded mock) reads it too, and folds it into the snapshot on its write
    const plain = new FileStore(path);
    await plain.write((s: TestState) => void s.labels.items.push({ id: 5 }));
    expect(existsSync(`${path}.journal`)).toBe(false);
    expect(JSON.parse(readFileSync(path, 'utf8')).labels.items).toHaveLength(6);
  });

  it('folds the journal into a new snapshot once it outgrows it (and 1 MiB)', async () => {
    const path = join(dir, 'state.json');
    const store = journaled(path);
    await store.write((s) => void (s.labels = { labels: [], blobs: [] }));
    for (let i = 0; i < 12; i++) await store.write((s: TestState) => void s.labels.blobs.push('x'.repeat(100_000)));
    const journal = existsSync(`${path}.journal`) ? readFileSync(`${path}.journal`, 'utf8') : '';
    expect(journal.length).toBeLessThan(1024 * 1024);
    expect(JSON.parse(readFileSync(path, 'utf8')).labels.blobs.length).toBeGreaterThanOrEqual(10);
    expect(await journaled(path).read((s: TestState) => (s.labels.blobs as string[]).length)).toBe(12);
  });

  it('keeps a throwing write out of the journal and the state', async () => {
    const path = join(dir, 'state.json');
    const store = journaled(path);
    await store.write((s) => void (s.labels = { labels: [], items: [1] }));
    await store.write((s: TestState) => void s.labels.items.push(2));
    await expect(
      store.write((s: TestState) => {
        s.labels.items.push(3);
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(await store.read((s: TestState) => s.labels.items)).toEqual([1, 2]);
    expect(await journaled(path).read((s: TestState) => s.labels.items)).toEqual([1, 2]);
  });

  it('ignores an incomplete last line with a warning naming the journal, and cuts it off before appending', async () => {
    const path = join(dir, 'state.json');
    const store = journaled(path);
    await store.write((s) => void (s.labels = { labels: [], items: [] }));
    await store.write((s: TestState) => void s.labels.items.push('kept'));
    appendFileSync(`${path}.journal`, '[[["labels","items"],"1","torn');
    const warnings: string[] = [];
    const next = journaled(path, (t) => warnings.push(t));
    await next.write((s: TestState) => void s.labels.items.push('after'));
    expect(warnings.join('\n')).toContain(`${path}.journal`);
    expect(warnings.join('\n')).toContain('incomplete');
    expect(readFileSync(`${path}.journal`, 'utf8')).not.toContain('torn');
    expect(await journaled(path).read((s: TestState) => s.labels.items)).toEqual(['kept', 'after']);
  });

  it('refuses a journal with a corrupt line inside, naming the file and the fix, and never rewrites it', async () => {
    const path = join(dir, 'state.json');
    const store = journaled(path);
    await store.write((s) => void (s.labels = { labels: [], items: [] }));
    await store.write((s: TestState) => void s.labels.items.push(1));
    appendFileSync(`${path}.journal`, 'not json\n[[["labels","items"],"1",2]]\n');
    const before = readFileSync(`${path}.journal`, 'utf8');
    const other = journaled(path);
    const err = await other.read((s) => s).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StateFileError);
    expect((err as StateFileError).message).toContain(`${path}.journal`);
    expect((err as StateFileError).message).toContain('line 3');
    expect((err as StateFileError).hint).toContain(`mv ${path}.journal`);
    await expect(other.write((s) => void (s.x = 1))).rejects.toBeInstanceOf(StateFileError);
    expect(readFileSync(`${path}.journal`, 'utf8')).toBe(before);
  });

  it('a default a read filled in memory only, then a write into it: the journal never holds a line it cannot replay', async () => {
    const path = join(dir, 'state.json');
    const store = journaled(path);
    await store.write((s) => void (s.labels = { labels: [], items: [] }));
    // as GET /oauth2/mock/events/receivers once did: a read makes a slice in memory, the files never hold it
    await store.read((s: TestState) => void (s.labels.lazy ??= { items: [] }));
    await store.write((s: TestState) => void s.labels.lazy.items.push('acknowledged'));
    await store.write((s: TestState) => void s.labels.items.push('after'));
    // replayed from the files alone, as after kill -9
    expect(await journaled(path).read((s: TestState) => [s.labels.lazy?.items, s.labels.items])).toEqual([['acknowledged'], ['after']]);
  });

  it('a write that changes nothing (an equal list put back, a value set and set back) adds no journal line', async () => {
    const path = join(dir, 'state.json');
    const store = journaled(path);
    await store.write((s) => void (s.labels = { labels: [], items: [{ id: 1 }] }));
    await store.write((s: TestState) => void s.labels.items.push({ id: 2 }));
    const before = readFileSync(`${path}.journal`, 'utf8');
    await store.write((s: TestState) => void (s.labels.items = s.labels.items.filter((x: { id: number }) => x.id !== 99)));
    await store.write((s: TestState) => {
      s.labels.items.push({ id: 3 });
      s.labels.items.pop();
      s.labels.flag = true;
      delete s.labels.flag;
    });
    expect(readFileSync(`${path}.journal`, 'utf8')).toBe(before);
    expect(await journaled(path).read((s: TestState) => s.labels.items)).toEqual([{ id: 1 }, { id: 2 }]);
  });

  it('a line that cannot be applied: refused naming what it costs; --salvage-journal keeps every other write and sets it aside, named', async () => {
    const path = join(dir, 'state.json');
    const store = journaled(path);
    await store.write((s) => void (s.labels = { labels: [], items: [] }));
    await store.write((s: TestState) => void s.labels.items.push('one'));
    // a line naming a place the state does not have (the poisoned journal of issue 49), then an acknowledged write after it
    appendFileSync(`${path}.journal`, '[[["oauth","secevents"],"receivers",[]]]\n[[["labels","items"],"1","two"],[["labels","items"],"length",2]]\n');
    const before = readFileSync(`${path}.journal`, 'utf8');
    const err = (await journaled(path)
      .read((s) => s)
      .catch((e: unknown) => e)) as StateFileError;
    expect(err).toBeInstanceOf(StateFileError);
    expect(err.message).toContain(
      'line 3: a change\'s path ["oauth","secevents"] is not in the state (1 of its 3 writes cannot be applied: line 3; the other 2 still apply)',
    );
    expect(err.hint).toContain(`opsctl mock serve --state ${path} --salvage-journal`);
    expect(err.hint).toContain(`would lose all 3 writes since the snapshot ${path}`);
    expect(readFileSync(`${path}.journal`, 'utf8')).toBe(before);

    const report = await journaled(path).salvageJournal();
    expect(report).toMatchObject({ lines: 3, applied: 2, refused: [{ line: 3 }], rejectedPath: `${path}.journal.rejected`, keptAs: `${path}.journal.bad` });
    expect(readFileSync(`${path}.journal.bad`, 'utf8')).toBe(before);
    expect(JSON.parse(readFileSync(`${path}.journal.rejected`, 'utf8'))).toMatchObject({ line: 3, text: '[[["oauth","secevents"],"receivers",[]]]' });
    expect(existsSync(`${path}.journal`)).toBe(false);
    expect(await journaled(path).read((s: TestState) => s.labels.items)).toEqual(['one', 'two']);
  });

  it("ignores a journal that continues another snapshot (a crash between a snapshot and its journal's start)", async () => {
    const path = join(dir, 'state.json');
    const store = journaled(path);
    await store.write((s) => void (s.labels = { labels: [], items: ['old'] }));
    await store.write((s: TestState) => void s.labels.items.push('in the journal'));
    // the snapshot replaced as a compaction would, with the journal's change already in it
    // (and a change after it: applying the old journal again would cut it off)
    writeFileSync(path, JSON.stringify({ labels: { labels: [], items: ['old', 'in the journal', 'later'] } }));
    expect(await journaled(path).read((s: TestState) => s.labels.items)).toEqual(['old', 'in the journal', 'later']);
  });
});

describe('a write costs O(1) in the collection size', () => {
  it('a label create through HTTP touches the same few objects with 500 or 2,500 labels, and rebuilds no index', async () => {
    const store = new MemoryStore();
    const mock = await createMockServer({ services: ['tracker'], state: store, options: { tracker: { rateLimit: { limit: 100_000, windowMs: 60_000 } } } });
    try {
      await mock.service('tracker');
      const token = await store.read((s) => (s.tracker as { token: string }).token);
      const post = (name: string) =>
        fetch(`${mock.url}/api/v3/labels`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'tracker-token': token },
          body: JSON.stringify({ name }),
        });
      const grow = (n: number) =>
        store.write((s: TestState) => {
          const labels = s.tracker.labels as Array<Record<string, unknown>>;
          for (let i = 0; i < n; i++) labels.push({ id: 1_000_000 + labels.length, name: `seed-${labels.length}`, archived: false });
        });
      await grow(500);
      expect((await post('first')).status).toBe(201);
      const builds = indexStats.builds;
      const small = { ...txStats };
      await grow(2_000);
      expect((await post('second')).status).toBe(201);
      expect(txStats).toEqual(small);
      expect(small.proxied).toBeLessThan(20);
      expect(indexStats.builds).toBe(builds);
      // the index answers the uniqueness check: a duplicate (any case) is still 422, a failed write undoes itself
      expect((await post('SEED-1200')).status).toBe(422);
      expect((await post('third')).status).toBe(201);
      expect(await store.read((s: TestState) => (s.tracker.labels as unknown[]).length)).toBe(2_500 + 3);
    } finally {
      await mock.close();
    }
  });

  it('a rolled-back write leaves prototype-free maps prototype-free and a "__proto__" key an own key', async () => {
    const map = Object.create(null) as Record<string, unknown>;
    const store = new MemoryStore({ map });
    await store.write((s: TestState) => void (s.map['__proto__'] = 'own'));
    expect(Object.hasOwn(map, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(map)).toBe(null);
    await expect(
      store.write((s: TestState) => {
        delete s.map['__proto__'];
        s.map.other = 1;
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    expect(Object.keys(map)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).other).toBeUndefined();
  });
});
