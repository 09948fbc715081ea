import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { etcdLadderDirs, PINNED_ETCD } from '../helpers/etcd-releases.js';

const dirs = etcdLadderDirs();
const V = PINNED_ETCD['3.7'];
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/**
 * `kv release get 3.7.N` verified like every release (test/e2e/kv-release-get.test.ts has the download
 * faults): an archive laid out as etcd's own (etcd-vV-linux-amd64/{etcd, etcdctl, etcdutl, README*.md,
 * Documentation}) repacked from the 3.7 build of scripts/etcd-build.sh, on a loopback mirror with its
 * SHA256SUMS; from 3.5 on the release must ship an etcdutl that names the version too.
 */
describe.runIf(Boolean(dirs))(`kv release get ${V}: etcd, etcdctl and etcdutl verified (real ${V} binaries on a loopback mirror)`, () => {
  const root = mkdtempSync(join(tmpdir(), 'opsctl-release37-'));
  const mirror = join(root, 'mirror');
  const env = { OPSCTL_CONFIG_DIR: join(root, 'config') };
  const cache = join(root, 'config', 'data', 'cache', 'etcd-releases');
  const opsctl = (...args: string[]) => runBin(['kv', 'release', ...args], { env, timeout: 180_000 });
  let server: Server;
  let base = '';

  /** A .tar.gz named as etcd `V` holding `tools` (name → the file it links to). */
  const pack = (tools: Record<string, string>): Buffer => {
    const stage = mkdtempSync(join(root, 'stage-'));
    const top = join(stage, `etcd-v${V}-linux-amd64`);
    mkdirSync(join(top, 'Documentation'), { recursive: true });
    for (const [name, file] of Object.entries(tools)) symlinkSync(file, join(top, name));
    for (const r of ['README.md', 'README-etcdctl.md', 'README-etcdutl.md']) writeFileSync(join(top, r), `etcd ${V}\n`);
    const out = join(stage, 'out.tar.gz');
    // (gzip -1: the binaries are large, and the level is not what is tested)
    execFileSync('tar', ['--use-compress-program=gzip -1', '-chf', out, '-C', stage, `etcd-v${V}-linux-amd64`]);
    const b = readFileSync(out);
    rmSync(stage, { recursive: true, force: true });
    return b;
  };
  const publish = (name: string, archive: Buffer) => {
    const d = join(mirror, name, `v${V}`);
    mkdirSync(d, { recursive: true });
    writeFileSync(join(d, `etcd-v${V}-linux-amd64.tar.gz`), archive);
    writeFileSync(join(d, 'SHA256SUMS'), `${'0'.repeat(64)}  etcd-v${V}-darwin-arm64.zip\n${sha(archive)}  etcd-v${V}-linux-amd64.tar.gz\n`);
  };
  let good: Buffer;

  beforeAll(async () => {
    const d7 = dirs!.v37;
    good = pack({ etcd: join(d7, 'etcd'), etcdctl: join(d7, 'etcdctl'), etcdutl: join(d7, 'etcdutl') });
    publish('good', good);
    publish('noetcdutl', pack({ etcd: join(d7, 'etcd'), etcdctl: join(d7, 'etcdctl') }));
    publish('oldetcdutl', pack({ etcd: join(d7, 'etcd'), etcdctl: join(d7, 'etcdctl'), etcdutl: join(dirs!.v36, 'etcdutl') }));
    server = createServer((req, res) => {
      const file = join(mirror, decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname));
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

  it.each([
    [
      'without etcdutl',
      'noetcdutl',
      new RegExp(
        `has no etcd-v${V.replace(/\./g, '\\.')}-linux-amd64/etcdutl: not an etcd ${V.replace(/\./g, '\\.')} release \\(every release from 3\\.5 ships etcdutl\\)`,
      ),
    ],
    [
      'whose etcdutl is another version',
      'oldetcdutl',
      new RegExp(`its etcdutl version says ${PINNED_ETCD['3.6'].replace(/\./g, '\\.')}, not ${V.replace(/\./g, '\\.')}`),
    ],
  ])('refuses an archive %s, naming it, with nothing left in the cache', async (_what, name, why) => {
    const r = await opsctl('get', V, '--from', `${base}/${name}`);
    expect(r.exitCode, String(r.stderr)).toBe(1);
    expect(String(r.stderr)).toMatch(why);
    expect(existsSync(cache) ? readdirSync(cache) : []).toEqual([]);
  });

  it(`downloads ${V}, checks its SHA-256 and its three tools' versions, and lists it`, async () => {
    const r = await opsctl('get', V, '--from', `${base}/good`, '--json');
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const dir = join(cache, `etcd-v${V}-linux-amd64`);
    expect(JSON.parse(String(r.stdout))).toEqual({ version: V, dir, sha256: sha(good) });
    expect(execFileSync(join(dir, 'etcdutl'), ['version']).toString()).toMatch(new RegExp(`^etcdutl version: ${V.replace(/\./g, '\\.')}$`, 'm'));
    expect(readdirSync(dir).sort()).toEqual([
      'Documentation',
      'README-etcdctl.md',
      'README-etcdutl.md',
      'README.md',
      'etcd',
      'etcdctl',
      'etcdutl',
      'opsctl-release.json',
    ]);
    const list = JSON.parse(String((await opsctl('list', '--json')).stdout)) as Array<{ version: string }>;
    expect(list.map((x) => x.version)).toEqual([V]);
  });
});
