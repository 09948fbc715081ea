import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDefaultDispatcher } from '../../src/core/http.js';
import { getRelease, ReleaseError } from '../../src/kv/release/release.js';

const V = '3.5.21';
const NAME = `etcd-v${V}-linux-amd64.tar.gz`;
const ARCHIVE = Buffer.from('not really an archive, but bytes to hash and count '.repeat(2000));
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Mirror paths → answers: the official layout (BASE/vVERSION/{archive,SHA256SUMS}) under one prefix per case. */
type Route = (res: ServerResponse) => void;

/**
 * `kv release get`'s download through core/http against loopback mirrors, up to the checksum (what comes after
 * runs the release's binaries: the e2e kv-release-get tests). Each refusal names what was wrong; nothing is cached.
 */
describe('kv release get: the archive and SHA256SUMS from a mirror, over core/http', () => {
  const cache = mkdtempSync(join(tmpdir(), 'opsctl-release-get-'));
  const routes = new Map<string, Route>();
  let mirror: Server;
  let storage: Server;
  let base = '';
  let storageBase = '';
  const sums = (hex: string) => `${'0'.repeat(64)}  etcd-v${V}-darwin-amd64.zip\n${hex}  ${NAME}\n`;

  beforeAll(async () => {
    const listen = async (s: Server) => {
      await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
      const a = s.address();
      return `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
    };
    mirror = createServer((req, res) => (routes.get(req.url ?? '') ?? ((r) => void r.writeHead(404).end('not found')))(res));
    // another origin, as GitHub's downloads redirect to their storage
    storage = createServer((req, res) =>
      req.url === `/${NAME}` ? res.writeHead(200, { 'content-length': String(ARCHIVE.length) }).end(ARCHIVE) : res.writeHead(404).end(),
    );
    base = await listen(mirror);
    storageBase = await listen(storage);
  });
  afterAll(async () => {
    await closeDefaultDispatcher({ interrupted: true });
    for (const s of [mirror, storage]) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
    rmSync(cache, { recursive: true, force: true });
  });

  const get = (prefix: string, extra: { signal?: AbortSignal } = {}) =>
    getRelease({ version: V, from: `${base}/${prefix}`, cacheDir: cache, platform: 'linux-amd64', timeoutMs: 2_000, ...extra }).catch((e: unknown) => e);
  const publish = (prefix: string, archive: Route | undefined, sumsText: string | undefined) => {
    if (archive) routes.set(`/${prefix}/v${V}/${NAME}`, archive);
    if (sumsText !== undefined) routes.set(`/${prefix}/v${V}/SHA256SUMS`, (res) => void res.writeHead(200).end(sumsText));
  };
  const nothingCached = () => expect(readdirSync(cache)).toEqual([]);

  it('streams the archive through a redirect to another origin and hashes what it wrote: a SHA256SUMS of another file is refused, naming both', async () => {
    publish('redirected', (res) => void res.writeHead(302, { location: `${storageBase}/${NAME}` }).end(), sums('ab'.repeat(32)));
    const err = await get('redirected');
    expect(err).toBeInstanceOf(ReleaseError);
    expect(err).toMatchObject({
      code: 'checksum',
      message: `${NAME} does not match SHA256SUMS: its SHA-256 is ${sha(ARCHIVE)} (${ARCHIVE.length} bytes), SHA256SUMS says ${'ab'.repeat(32)}`,
    });
    nothingCached();
  });

  it('no SHA256SUMS (404), or none with a line for the archive: refused before the archive is fetched', async () => {
    publish('nosums', (res) => void res.writeHead(500).end(), undefined);
    expect(await get('nosums')).toMatchObject({
      code: 'sums',
      message: `${base}/nosums/v${V}/SHA256SUMS answered 404 Not Found: the release's checksums are needed to trust the archive`,
    });
    publish('noline', undefined, `${'f'.repeat(64)}  etcd-v${V}-linux-arm64.tar.gz\n`);
    expect(await get('noline')).toMatchObject({
      code: 'sums',
      message: `${base}/noline/v${V}/SHA256SUMS has no line for ${NAME}: the archive cannot be verified`,
    });
    nothingCached();
  });

  it('a SHA256SUMS over 1 MiB is not one', async () => {
    publish('huge', undefined, 'x'.repeat((1 << 20) + 10));
    expect(await get('huge')).toMatchObject({ code: 'sums', message: `${base}/huge/v${V}/SHA256SUMS is over 1 MiB: not a SHA256SUMS file` });
  });

  it('an archive cut off mid-way, or shorter than announced: truncated, nothing kept', async () => {
    publish(
      'cut',
      (res) => {
        res.writeHead(200, { 'content-length': String(ARCHIVE.length) });
        res.write(ARCHIVE.subarray(0, 1000), () => res.destroy());
      },
      sums(sha(ARCHIVE)),
    );
    const err = await get('cut');
    expect(err).toBeInstanceOf(ReleaseError);
    expect((err as Error).message).toMatch(
      new RegExp(`^the download of ${base}/cut/v${V}/${NAME.replace(/\./g, '\\.')} broke off after \\d+ bytes of ${ARCHIVE.length}: it is truncated`),
    );
    nothingCached();
  });

  it('an archive answered 404: named with its status', async () => {
    publish('noarchive', undefined, sums(sha(ARCHIVE)));
    expect(await get('noarchive')).toMatchObject({ code: 'download', message: `${base}/noarchive/v${V}/${NAME} answered 404 Not Found` });
  });

  it('a mirror that is not there: "could not download", the address named', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const a = closed.address();
    const port = typeof a === 'object' && a ? a.port : 0;
    await new Promise((r) => closed.close(r));
    const err = await getRelease({ version: V, from: `http://127.0.0.1:${port}`, cacheDir: cache, platform: 'linux-amd64', timeoutMs: 5_000 }).catch(
      (e: unknown) => e,
    );
    // (sent again by core/http's retry policy, then refused as the last attempt said)
    expect(err).toMatchObject({
      code: 'sums',
      message: `could not download http://127.0.0.1:${port}/v${V}/SHA256SUMS: connect ECONNREFUSED 127.0.0.1:${port}`,
    });
    nothingCached();
  });

  it('Ctrl-C: interrupted (exit 130), nothing kept', async () => {
    const ac = new AbortController();
    ac.abort();
    expect(await get('redirected', { signal: ac.signal })).toMatchObject({ exitCode: 130 });
    nothingCached();
  });
});
