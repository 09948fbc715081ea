import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { etcdReleaseDirs } from '../helpers/etcd-releases.js';

const releases = etcdReleaseDirs();
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/**
 * `kv release get` through the built binary against a loopback mirror laid out like etcd's official
 * downloads (BASE/vVERSION/{etcd-vVERSION-linux-amd64.tar.gz, SHA256SUMS}), serving archives repacked
 * from the real 3.2.32 and 3.3.27 releases. Each bad case is refused naming what was wrong, and leaves
 * nothing in the cache.
 */
describe.runIf(releases)('kv release get: verified etcd releases from a loopback mirror (real 3.2.32/3.3.27 binaries)', () => {
  const root = mkdtempSync(join(tmpdir(), 'opsctl-release-'));
  const mirror = join(root, 'mirror');
  const env = { OPSCTL_CONFIG_DIR: join(root, 'config') };
  const cache = join(root, 'config', 'data', 'cache', 'etcd-releases');
  const opsctl = (...args: string[]) => runBin(['kv', 'release', ...args], { env, timeout: 180_000 });
  let server: Server;
  let base = '';
  const archives: Record<string, Buffer> = {};

  /** A .tar.gz of release `bins` named as etcd `version` (binaries, a README and a docs directory). */
  const pack = (version: string, bins: string): Buffer => {
    const stage = mkdtempSync(join(root, 'stage-'));
    const top = join(stage, `etcd-v${version}-linux-amd64`);
    mkdirSync(join(top, 'Documentation'), { recursive: true });
    symlinkSync(join(bins, 'etcd'), join(top, 'etcd'));
    symlinkSync(join(bins, 'etcdctl'), join(top, 'etcdctl'));
    writeFileSync(join(top, 'README.md'), `etcd ${version}\n`);
    writeFileSync(join(top, 'Documentation', 'dev-guide.md'), 'docs\n');
    const out = join(stage, 'out.tar.gz');
    execFileSync('tar', ['-czhf', out, '-C', stage, `etcd-v${version}-linux-amd64`]);
    const b = readFileSync(out);
    rmSync(stage, { recursive: true, force: true });
    return b;
  };
  /** MIRROR/NAME/vVERSION/{archive,SHA256SUMS}. */
  const publish = (name: string, version: string, archive: Buffer, sums: string | undefined) => {
    const d = join(mirror, name, `v${version}`);
    mkdirSync(d, { recursive: true });
    writeFileSync(join(d, `etcd-v${version}-linux-amd64.tar.gz`), archive);
    if (sums !== undefined) writeFileSync(join(d, 'SHA256SUMS'), sums);
  };
  const sumsLine = (version: string, hex: string) =>
    `${'0'.repeat(64)}  etcd-v${version}-darwin-amd64.zip\n${hex}  etcd-v${version}-linux-amd64.tar.gz\n${'f'.repeat(64)}  etcd-v${version}-linux-arm64.tar.gz\n`;

  beforeAll(async () => {
    archives['3.2.32'] = pack('3.2.32', releases!.v32);
    archives['3.3.27'] = pack('3.3.27', releases!.v33);
    const a32 = archives['3.2.32'];
    const a33 = archives['3.3.27'];
    publish('good', '3.2.32', a32, sumsLine('3.2.32', sha(a32)));
    publish('good', '3.3.27', a33, sumsLine('3.3.27', sha(a33)));
    // The archive of 3.3.27, but SHA256SUMS names another file's hash.
    publish('badsum', '3.3.27', a33, sumsLine('3.3.27', sha(a32)));
    // Cut in half, its SHA256SUMS made for the cut file (a mirror that stored a broken download).
    const half = a33.subarray(0, Math.floor(a33.length / 2));
    publish('truncated', '3.3.27', half, sumsLine('3.3.27', sha(half)));
    // SHA256SUMS without the linux-amd64 line.
    publish('noline', '3.3.27', a33, `${sha(a33)}  etcd-v3.3.27-linux-arm64.tar.gz\n`);
    // No SHA256SUMS at all.
    publish('nosums', '3.3.27', a33, undefined);
    // Named 3.3.27, holding the 3.2.32 binaries; its SHA256SUMS matches.
    const wrong = pack('3.3.27', releases!.v32);
    publish('wrongversion', '3.3.27', wrong, sumsLine('3.3.27', sha(wrong)));

    server = createServer((req, res) => {
      const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
      // /cut/…: announces the whole archive, sends half, and drops the connection.
      if (path.startsWith('/cut/')) {
        const file = join(mirror, 'good', path.slice('/cut/'.length));
        if (!existsSync(file)) return void res.writeHead(404).end();
        const body = readFileSync(file);
        if (path.endsWith('SHA256SUMS')) return void res.writeHead(200).end(body);
        res.writeHead(200, { 'content-length': String(body.length) });
        res.write(body.subarray(0, Math.floor(body.length / 2)), () => res.destroy());
        return;
      }
      const file = join(mirror, path);
      if (!file.startsWith(mirror) || !existsSync(file) || !statSync(file).isFile()) return void res.writeHead(404).end('not found');
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(readFileSync(file));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const addr = server.address();
    base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  }, 300_000);

  afterAll(async () => {
    await new Promise((r) => server?.close(r));
    rmSync(root, { recursive: true, force: true });
  });

  const cacheEntries = () => (existsSync(cache) ? readdirSync(cache).sort() : []);

  it('downloads, verifies and caches 3.2.32; a second get is served from the cache; list shows it', async () => {
    const r = await opsctl('get', '3.2.32', '--from', `${base}/good`, '--json');
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const out = JSON.parse(String(r.stdout));
    const dir = join(cache, 'etcd-v3.2.32-linux-amd64');
    expect(out).toEqual({ version: '3.2.32', dir, sha256: sha(archives['3.2.32']!) });
    expect(execFileSync(join(dir, 'etcd'), ['--version']).toString()).toMatch(/^etcd Version: 3\.2\.32$/m);
    expect(readFileSync(join(dir, 'Documentation', 'dev-guide.md'), 'utf8')).toBe('docs\n');
    expect(statSync(join(dir, 'etcd')).mode & 0o777).toBe(0o755);
    // Only the release itself: no archive, no temporary directory.
    expect(cacheEntries()).toEqual(['etcd-v3.2.32-linux-amd64']);
    expect(readdirSync(dir).sort()).toEqual(['Documentation', 'README.md', 'etcd', 'etcdctl', 'opsctl-release.json']);

    const again = await opsctl('get', '3.2.32', '--from', `${base}/nowhere`);
    expect(again.exitCode, String(again.stderr)).toBe(0);
    expect(String(again.stdout).trim()).toBe(dir);
    expect(String(again.stderr)).toContain('already in the cache');

    const list = await opsctl('list', '--json');
    expect(list.exitCode, String(list.stderr)).toBe(0);
    const rows = JSON.parse(String(list.stdout));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ version: '3.2.32', dir, sha256: sha(archives['3.2.32']!) });
    expect(rows[0].bytes).toBeGreaterThan(10_000_000);
  });

  it.each([
    ['a wrong checksum', 'badsum', /does not match SHA256SUMS: its SHA-256 is [0-9a-f]{64} .*SHA256SUMS says [0-9a-f]{64}/],
    ['a truncated archive (its SHA256SUMS made for the cut file)', 'truncated', /etcd-v3\.3\.27-linux-amd64\.tar\.gz: the archive (is truncated|ends early)/],
    ['a download cut off mid-way', 'cut', /is truncated|broke off/],
    ['a SHA256SUMS without the archive', 'noline', /SHA256SUMS has no line for etcd-v3\.3\.27-linux-amd64\.tar\.gz/],
    ['no SHA256SUMS', 'nosums', /SHA256SUMS answered 404/],
    ['an archive whose etcd is another version', 'wrongversion', /its etcd --version says 3\.2\.32, not 3\.3\.27/],
  ])('refuses %s, naming it, with nothing left in the cache', async (_what, name, why) => {
    const before = cacheEntries();
    const r = await opsctl('get', '3.3.27', '--from', `${base}/${name}`);
    expect(r.exitCode, String(r.stderr)).toBe(1);
    expect(String(r.stderr)).toMatch(/etcd 3\.3\.27 refused: /);
    expect(String(r.stderr)).toMatch(why);
    expect(String(r.stdout)).toBe('');
    expect(cacheEntries()).toEqual(before.filter((e) => !e.includes('3.3.27')));
    expect(cacheEntries().some((e) => e.startsWith('.'))).toBe(false);
  });

  it('bad input is a usage error before anything is fetched', async () => {
    const v = await opsctl('get', '3.3');
    expect(v.exitCode).toBe(2);
    expect(String(v.stderr)).toMatch(/VERSION: "3\.3" is not an etcd release version/);
    const http = await opsctl('get', '3.3.27', '--from', 'http://mirror.example.com/etcd');
    expect(http.exitCode).toBe(2);
    expect(String(http.stderr)).toMatch(/--from: .*not https/);
  });

  it('3.3.27 from the good mirror, into --cache DIR', async () => {
    const own = join(root, 'own-cache');
    const r = await opsctl('get', '3.3.27', '--from', `${base}/good`, '--cache', own, '--json');
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(JSON.parse(String(r.stdout)).dir).toBe(join(own, 'etcd-v3.3.27-linux-amd64'));
    const list = JSON.parse(String((await opsctl('list', '--cache', own, '--json')).stdout));
    expect(list.map((x: { version: string }) => x.version)).toEqual(['3.3.27']);
  });
});
