import { copyFileSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileStore, StateFileError } from '../../packages/mock/src/store.js';
import type { TestState } from '../helpers/mock.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'opsctl-checked-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const identity = (path: string) => {
  const st = statSync(path, { bigint: true });
  return `${st.ino}:${st.size}:${st.mtimeNs}:f`;
};

// PATH.sha256 keeps the digest of the content last checked (or written) and the identity of the file that held
// it: that very file is read without hashing it (no node:crypto for a short command); any other is hashed.
describe('the mock state file: content checked before is known by its file, anything else by its digest', () => {
  it('a write records the digest and the new file, which the next store reads as checked', async () => {
    const path = join(dir, 'state.json');
    await new FileStore(path).write((s) => void (s.labels = { labels: [], items: [1] }));
    // the digest alone in PATH.sha256, as an earlier opsctl reads and writes it; the file's identity beside it
    expect(readFileSync(`${path}.sha256`, 'utf8')).toMatch(/^[0-9a-f]{64}\n$/);
    expect(readFileSync(`${path}.sha256.id`, 'utf8').trim()).toBe(identity(path));
    expect(await new FileStore(path).read((s: TestState) => s.labels.items)).toEqual([1]);
  });

  it('the same file changed in place (same size, another shape) is checked again and refused', async () => {
    const path = join(dir, 'state.json');
    await new FileStore(path).write((s) => void (s.labels = { labels: [], items: [1] }));
    const before = readFileSync(path, 'utf8');
    const edited = '{"tracker":7}'.padEnd(before.length, ' ');
    writeFileSync(path, edited);
    expect(statSync(path).size).toBe(Buffer.byteLength(before));
    await expect(new FileStore(path).read(() => undefined)).rejects.toBeInstanceOf(StateFileError);
  });

  it('the checked content in another file (copied back, restored) is hashed, taken, and its file recorded', async () => {
    const path = join(dir, 'state.json');
    await new FileStore(path).write((s) => void (s.labels = { labels: [], items: [2] }));
    copyFileSync(path, `${path}.copy`);
    renameSync(`${path}.copy`, path);
    expect(await new FileStore(path).read((s: TestState) => s.labels.items)).toEqual([2]);
    expect(readFileSync(`${path}.sha256.id`, 'utf8').trim()).toBe(identity(path));
  });

  it('a marker without the identity (an earlier opsctl wrote it) is honoured by its digest', async () => {
    const path = join(dir, 'state.json');
    await new FileStore(path).write((s) => void (s.labels = { labels: [], items: [3] }));
    rmSync(`${path}.sha256.id`);
    expect(await new FileStore(path).read((s: TestState) => s.labels.items)).toEqual([3]);
  });
});
