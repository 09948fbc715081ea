import { execa } from 'execa';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileStore, MemoryStore } from '@opsctl/mock/store.js';
import { bundleScript } from '../helpers/script.js';
import type { TestState } from '../helpers/mock.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'opsctl-store-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('FileStore', () => {
  it('keeps a transaction all or nothing: a throwing write changes nothing', async () => {
    const store = new FileStore(join(dir, 'state.json'));
    await store.write((s) => void (s.items = [1]));
    await expect(
      store.write((s: TestState) => {
        s.items.push(2);
        throw new Error('validation failed');
      }),
    ).rejects.toThrow('validation failed');
    expect(await store.read((s) => s.items)).toEqual([1]);
    expect(JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')).items).toEqual([1]);
  });

  it('makes its directory again when it was removed between two writes', async () => {
    const sub = join(dir, 'data');
    const store = new FileStore(join(sub, 'state.json'));
    await store.write((s) => void (s.n = 1));
    rmSync(sub, { recursive: true, force: true });
    await store.write((s) => void (s.n = 2));
    expect(JSON.parse(readFileSync(join(sub, 'state.json'), 'utf8')).n).toBe(2);
  });

  it('sees writes made by another store on the same file', async () => {
    const a = new FileStore(join(dir, 'state.json'));
    const b = new FileStore(join(dir, 'state.json'));
    await a.write((s) => void (s.n = 1));
    expect(await b.read((s) => s.n)).toBe(1);
    await b.write((s) => void (s.n = 2));
    expect(await a.read((s) => s.n)).toBe(2);
  });

  it('runs registered initializers once and keeps existing data', async () => {
    const path = join(dir, 'state.json');
    const store = new FileStore(path);
    await store.addInit((s) => (s.svc ? false : ((s.svc = { seeded: true }), true)));
    await store.write((s: TestState) => void (s.svc.extra = 1));
    const again = new FileStore(path);
    await again.addInit((s) => (s.svc ? false : ((s.svc = { seeded: 'twice' }), true)));
    expect(await again.read((s) => s.svc)).toEqual({ seeded: true, extra: 1 });
  });

  it('survives a crash between writing the temporary file and renaming it', async () => {
    const path = join(dir, 'state.json');
    const script = await bundleScript(`
      import fs from 'node:fs';
      import { FileStore } from './packages/mock/src/store.ts';
      const store = new FileStore(process.argv[2], 2000);
      await store.write((s) => { s.n = 1; s.note = 'before the crash'; });
      // Die the moment the new content is written and the rename is about to happen.
      fs.rename = () => process.kill(process.pid, 'SIGKILL');
      await store.write((s) => { s.n = 2; });
    `);
    const child = await execa(process.execPath, [script, path], { reject: false });
    expect(child.signal).toBe('SIGKILL');
    // The state file is the complete old version; the half-done write is only a temp file beside it.
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ n: 1, note: 'before the crash' });
    expect(readdirSync(dir).some((f) => /^state\.json\.\d+$/.test(f))).toBe(true);
    // The crashed holder's lock goes stale and the next writer takes over.
    const store = new FileStore(path, 2000);
    await store.write((s) => void (s.n = 3));
    expect(await store.read((s) => s.n)).toBe(3);
    expect(existsSync(`${path}.lock`)).toBe(false);
    // The next writer also removed the killed writer's temporary file.
    expect(readdirSync(dir).some((f) => /^state\.json\.\d+$/.test(f))).toBe(false);
  });

  it('loses no write when two processes write at the same time', async () => {
    const path = join(dir, 'state.json');
    const script = await bundleScript(`
      import { FileStore } from './packages/mock/src/store.ts';
      const [path, who] = process.argv.slice(2);
      const store = new FileStore(path);
      for (let i = 0; i < 100; i++) {
        await store.write((s) => { s.count = (s.count ?? 0) + 1; (s.ids ??= []).push(who + i); });
      }
    `);
    const [a, b] = await Promise.all([execa(process.execPath, [script, path, 'a']), execa(process.execPath, [script, path, 'b'])]);
    expect(a.exitCode).toBe(0);
    expect(b.exitCode).toBe(0);
    const state = JSON.parse(readFileSync(path, 'utf8'));
    expect(state.count).toBe(200);
    expect(new Set(state.ids).size).toBe(200);
  }, 60_000);
});

describe('MemoryStore', () => {
  it('keeps a transaction all or nothing', async () => {
    const store = new MemoryStore({ items: [1] });
    await expect(
      store.write((s: TestState) => {
        s.items.push(2);
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    expect(await store.read((s) => s.items)).toEqual([1]);
  });
});

describe('CredentialStore', () => {
  it('loses no update when two processes change different profiles at once', async () => {
    const script = await bundleScript(`
      import { CredentialStore } from './src/config/credentials.ts';
      const [dir, who] = process.argv.slice(2);
      const store = new CredentialStore(dir);
      for (let i = 0; i < 30; i++) await store.update(who + i, () => ({ tracker: { token: who + '-' + i } }));
    `);
    await Promise.all([execa(process.execPath, [script, dir, 'a']), execa(process.execPath, [script, dir, 'b'])]);
    const all = JSON.parse(readFileSync(join(dir, 'credentials.json'), 'utf8'));
    expect(Object.keys(all)).toHaveLength(60);
  }, 60_000);
});
