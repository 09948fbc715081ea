import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultCacheDir, listReleases, releaseDir, sumFor } from '../../src/kv/release/release.js';

describe('the release cache as the ladder reads it (releaseDir)', () => {
  const data = mkdtempSync(join(tmpdir(), 'opsctl-release-dir-'));
  const cache = defaultCacheDir(data);
  const put = (version: string, complete = true) => {
    const dir = join(cache, `etcd-v${version}-linux-amd64`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'etcd'), '');
    if (complete)
      writeFileSync(join(dir, 'opsctl-release.json'), JSON.stringify({ version, sha256: 'a'.repeat(64), archive: 'x', source: 'y', fetchedAt: 'z' }));
    return dir;
  };
  afterAll(() => rmSync(data, { recursive: true, force: true }));

  it('an exact version, or the newest cached patch of a minor; a release without its manifest does not count', () => {
    const a = put('3.4.9');
    const b = put('3.4.23');
    put('3.4.30', false);
    put('3.5.0-rc.1');
    const c = put('3.5.21');
    expect(releaseDir('3.4.9', { data })).toBe(a);
    expect(releaseDir('3.4', { data })).toBe(b);
    expect(releaseDir('3.5', { data })).toBe(c);
    expect(releaseDir('3.4.30', { data })).toBeUndefined();
    expect(releaseDir('3.6', { data })).toBeUndefined();
    expect(releaseDir('3.4', { data: '/nonexistent', cache })).toBe(b);
    expect(listReleases(cache).map((r) => r.version)).toEqual(['3.5.21', '3.5.0-rc.1', '3.4.23', '3.4.9']);
  });

  it("SHA256SUMS: the archive's own line only (two spaces or binary-mode '*')", () => {
    const h = 'ab'.repeat(32);
    expect(sumFor(`${'0'.repeat(64)}  etcd-v3.5.21-linux-amd64.tar.gz.asc\n${h}  etcd-v3.5.21-linux-amd64.tar.gz\n`, 'etcd-v3.5.21-linux-amd64.tar.gz')).toBe(
      h,
    );
    expect(sumFor(`${h.toUpperCase()} *etcd-v3.5.21-linux-amd64.tar.gz\r\n`, 'etcd-v3.5.21-linux-amd64.tar.gz')).toBe(h);
    expect(sumFor(`${h}  etcd-v3.5.21-linux-arm64.tar.gz\n`, 'etcd-v3.5.21-linux-amd64.tar.gz')).toBeUndefined();
  });
});
