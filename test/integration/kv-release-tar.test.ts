import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { extractTarGz } from '../../src/kv/release/tar-gz.js';

describe('the release extractor refuses what an etcd release never holds', () => {
  const root = mkdtempSync(join(tmpdir(), 'opsctl-tar-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const top = 'etcd-v3.5.21-linux-amd64';
  let n = 0;
  /** A .tar.gz made by GNU tar from a staged tree; `extra` tar arguments (e.g. --transform). */
  const archive = (stage: (dir: string) => void, extra: string[] = []) => {
    const src = join(root, `src${++n}`);
    mkdirSync(join(src, top), { recursive: true });
    stage(join(src, top));
    const file = join(root, `a${n}.tar.gz`);
    execFileSync('tar', ['-czf', file, '-C', src, ...extra, top]);
    return file;
  };
  const dest = () => {
    const d = join(root, `out${++n}`);
    mkdirSync(d);
    return d;
  };

  it('extracts files and directories under the top directory, with their modes', async () => {
    const a = archive((d) => {
      writeFileSync(join(d, 'etcd'), '#!/bin/sh\n', { mode: 0o4777 });
      mkdirSync(join(d, 'Documentation', 'deep'), { recursive: true });
      writeFileSync(join(d, 'Documentation', 'deep', 'a.md'), 'x'.repeat(100_000));
    });
    const out = dest();
    expect((await extractTarGz(a, top, out)).sort()).toEqual(['Documentation/deep/a.md', 'etcd']);
    expect(readdirSync(out).sort()).toEqual(['Documentation', 'etcd']);
    // set-id and group/other write bits dropped
    expect(statSync(join(out, 'etcd')).mode & 0o7777).toBe(0o755);
  });

  it('a symlink', async () => {
    const a = archive((d) => symlinkSync('/etc/passwd', join(d, 'etcd')));
    const out = dest();
    await expect(extractTarGz(a, top, out)).rejects.toThrow(/tar type "2" \(a link or device\)/);
    expect(existsSync(join(out, 'etcd'))).toBe(false);
  });

  it('a path that climbs out, and one outside the top directory', async () => {
    const a = archive((d) => writeFileSync(join(d, 'etcd'), 'x'), ['--transform', `s,^${top}/etcd,${top}/../../escaped,`]);
    await expect(extractTarGz(a, top, dest())).rejects.toThrow(/unsafe path/);
    expect(existsSync(join(root, 'escaped'))).toBe(false);
    const b = archive((d) => writeFileSync(join(d, 'etcd'), 'x'), ['--transform', `s,^${top}/etcd,other/etcd,`]);
    await expect(extractTarGz(b, top, dest())).rejects.toThrow(/outside etcd-v3\.5\.21-linux-amd64\//);
  });

  it('not gzip at all', async () => {
    const f = join(root, 'plain.tar.gz');
    writeFileSync(f, 'this is not an archive');
    await expect(extractTarGz(f, top, dest())).rejects.toThrow(/truncated or not gzip/);
  });
});
