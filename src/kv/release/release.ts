import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { ladderRow } from '@opsctl/shared/etcd-ladder.js';
import { ApiError, InterruptedError, NetworkError } from '../../core/errors.js';
import type { HttpClient } from '../../core/http.js';
import { isLoopbackHost } from '../../core/redact.js';
import { ArchiveError, extractTarGz } from './tar-gz.js';

/**
 * The etcd release cache of `kv release get`: official release archives downloaded, checked against the
 * release's SHA256SUMS, extracted, and kept only when their etcd (and etcdctl) name the version asked
 * for. A release is in the cache only as a whole: it is built in a temporary directory beside the cache
 * and renamed into place with its manifest last, so a failure at any point leaves nothing behind.
 */

/** etcd's official release downloads: BASE/vVERSION/etcd-vVERSION-linux-ARCH.tar.gz and BASE/vVERSION/SHA256SUMS. */
export const RELEASE_BASE = 'https://github.com/etcd-io/etcd/releases/download';
export const MANIFEST = 'opsctl-release.json';

export interface ReleaseManifest {
  version: string;
  archive: string;
  sha256: string;
  source: string;
  fetchedAt: string;
}

export interface CachedRelease extends ReleaseManifest {
  dir: string;
  bytes: number;
}

/** Why a release was refused: what was wrong, named (the CLI adds the fix). */
export class ReleaseError extends Error {
  constructor(
    message: string,
    readonly code: 'download' | 'checksum' | 'sums' | 'archive' | 'version',
  ) {
    super(message);
  }
}

export function isReleaseVersion(v: string): boolean {
  return /^\d+\.\d+\.\d+(-(alpha|beta|rc)\.\d+)?$/.test(v);
}

/** linux-amd64 / linux-arm64 …: the archive of this machine (etcd publishes .tar.gz for Linux only). */
export function platform(arch: string = process.arch): string {
  const map: Record<string, string> = { x64: 'amd64', arm64: 'arm64', ppc64: 'ppc64le', s390x: 's390x' };
  return `linux-${map[arch] ?? arch}`;
}

export function archiveName(version: string, plat = platform()): string {
  return `etcd-v${version}-${plat}.tar.gz`;
}

/** The default cache: DATA/cache/etcd-releases (opsctl's data directory). */
export function defaultCacheDir(dataDir: string): string {
  return join(dataDir, 'cache', 'etcd-releases');
}

function readManifest(dir: string): ReleaseManifest | undefined {
  try {
    const m = JSON.parse(readFileSync(join(dir, MANIFEST), 'utf8')) as Partial<ReleaseManifest>;
    if (typeof m.version !== 'string' || typeof m.sha256 !== 'string' || !existsSync(join(dir, 'etcd'))) return undefined;
    return { version: m.version, archive: String(m.archive ?? ''), sha256: m.sha256, source: String(m.source ?? ''), fetchedAt: String(m.fetchedAt ?? '') };
  } catch {
    return undefined;
  }
}

function treeBytes(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) n += treeBytes(p);
    else if (e.isFile()) n += statSync(p).size;
  }
  return n;
}

/** Every complete release in the cache, newest version first. */
export function listReleases(cacheDir: string): CachedRelease[] {
  if (!existsSync(cacheDir)) return [];
  const out: CachedRelease[] = [];
  for (const e of readdirSync(cacheDir, { withFileTypes: true })) {
    if (!e.isDirectory() || e.name.startsWith('.')) continue;
    const dir = join(cacheDir, e.name);
    const m = readManifest(dir);
    if (m) out.push({ ...m, dir, bytes: treeBytes(dir) });
  }
  return out.sort((a, b) => compareVersions(b.version, a.version));
}

export function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.-]/).map((x) => (/^\d+$/.test(x) ? Number(x) : x));
  const pb = b.split(/[.-]/).map((x) => (/^\d+$/.test(x) ? Number(x) : x));
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i];
    const y = pb[i];
    if (x === y) continue;
    if (x === undefined) return 1; // 3.5.0 after 3.5.0-rc.1
    if (y === undefined) return -1;
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    return String(x) < String(y) ? -1 : 1;
  }
  return 0;
}

/**
 * The directory of a cached release for `version` (the ladder's `--target-bin` default): an exact
 * version (3.4.23), or a minor (3.4) for the newest cached patch of it. Undefined when none is cached.
 */
export function releaseDir(version: string, where: { data: string; cache?: string }): string | undefined {
  const all = listReleases(where.cache ?? defaultCacheDir(where.data));
  const hit = /^\d+\.\d+$/.test(version)
    ? all.find((r) => r.version.startsWith(`${version}.`) && !r.version.includes('-'))
    : all.find((r) => r.version === version);
  return hit?.dir;
}

/**
 * The tools a release of `version` ships, each checked to name the version: etcd and etcdctl, and from
 * 3.5 on etcdutl (the ladder's table: what restores a snapshot onto it, and checks the v2 store).
 */
export function releaseTools(version: string): string[] {
  const minor = /^(\d+\.\d+)\./.exec(version)?.[1] ?? '';
  const row = ladderRow(minor);
  const utl = row ? row.restoreTool === 'etcdutl' : Number(minor.split('.')[0]) > 3 || (minor.startsWith('3.') && Number(minor.split('.')[1]) >= 5);
  return ['etcd', 'etcdctl', ...(utl ? ['etcdutl'] : [])];
}

/** The version `DIR/etcd --version` names ("etcd Version: X"), and etcdctl's ("etcdctl version: X") and etcdutl's ("etcdutl version: X"). */
export async function binaryVersions(dir: string): Promise<{ etcd?: string; etcdctl?: string; etcdutl?: string }> {
  const run = promisify(execFile);
  const out = async (file: string, args: string[]) => {
    try {
      const r = await run(join(dir, file), args, { timeout: 60_000, env: { PATH: '/usr/bin:/bin', ETCDCTL_API: '3' } });
      return `${r.stdout}\n${r.stderr}`;
    } catch (err) {
      return `${(err as { stdout?: string }).stdout ?? ''}`;
    }
  };
  return {
    etcd: /^etcd Version: (\S+)$/m.exec(await out('etcd', ['--version']))?.[1],
    etcdctl: /^etcdctl version: (\S+)$/m.exec(await out('etcdctl', ['version']))?.[1],
    ...(existsSync(join(dir, 'etcdutl')) ? { etcdutl: /^etcdutl version: (\S+)$/m.exec(await out('etcdutl', ['version']))?.[1] } : {}),
  };
}

export interface GetReleaseOptions {
  version: string;
  /** A mirror laid out like the official downloads: BASE/vVERSION/{archive, SHA256SUMS}. */
  from?: string;
  cacheDir: string;
  /** Ctrl-C: the download stops (InterruptedError) and nothing is kept. */
  signal?: AbortSignal;
  /** Progress lines (stderr), a retry's included. */
  note?: (line: string) => void;
  /** --debug lines: each request, redacted. */
  debug?: (line: string) => void;
  /** How long each wait for the mirror may take (OPSCTL_HTTP_TIMEOUT_MS; default core/http's). */
  timeoutMs?: number;
  platform?: string;
}

export interface GotRelease {
  version: string;
  dir: string;
  sha256: string;
  cached: boolean;
}

/** BASE/vVERSION/NAME; a base must be https, or http to a loopback address (SHA256SUMS comes the same way). */
export function releaseUrl(base: string, version: string, name: string): URL {
  const url = new URL(`${base.replace(/\/+$/, '')}/v${version}/${name}`);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
    throw new ReleaseError(
      `${base} is not https (plain http only to a loopback address): the checksums would come over the same unprotected channel`,
      'download',
    );
  }
  return url;
}

/**
 * The client of the mirror: core/http's (its retries of a failed connection or a 5xx, Retry-After, redirects,
 * --debug), undici's shared agent, which the command closes (ctx.onCleanup in commands/kv/release-get.ts).
 */
async function mirrorClient(o: GetReleaseOptions, base: string): Promise<HttpClient> {
  const { HttpClient } = await import('../../core/http.js');
  return new HttpClient({ service: 'release', baseUrl: base, signal: o.signal, notice: o.note, debug: o.debug, timeoutMs: o.timeoutMs });
}

/** The ReleaseError of a request that got no usable answer (`after`: what is said of a status), or the error as it is (Ctrl-C). */
function refusal(url: URL, err: unknown, code: 'download' | 'sums', after = ''): unknown {
  if (err instanceof InterruptedError) return err;
  if (err instanceof ApiError) return new ReleaseError(`${url.href} answered ${statusLine(err.status)}${after}`, code);
  if (err instanceof NetworkError) return new ReleaseError(`could not download ${url.href}: ${(err.cause as Error | undefined)?.message ?? err.message}`, code);
  return err;
}

/** 404 → "404 Not Found". */
function statusLine(status: number): string {
  return `${status} ${process.getBuiltinModule('node:http').STATUS_CODES[status] ?? ''}`.trim();
}

/** URL streamed to FILE (never held whole), its SHA-256 and size; a body cut short or shorter than announced is refused. */
async function download(http: HttpClient, url: URL, file: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  let expected = NaN;
  let started = false;
  const count = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      hash.update(chunk);
      bytes += chunk.length;
      cb(null, chunk);
    },
  });
  let status: number;
  try {
    ({ status } = await http.request({
      path: url.href,
      auth: false,
      headers: { accept: '*/*' },
      followRedirects: true,
      deadline: 'each-wait',
      consume: async (body, head) => {
        started = true;
        expected = Number(head.headers['content-length'] ?? NaN);
        await pipeline(body, count, createWriteStream(file, { mode: 0o600 }));
      },
    }));
  } catch (err) {
    if (!started || err instanceof InterruptedError) throw refusal(url, err, 'download');
    const why = err instanceof NetworkError ? ((err.cause as Error | undefined)?.message ?? err.message) : (err as Error).message;
    throw new ReleaseError(
      `the download of ${url.href} broke off after ${bytes} bytes${Number.isFinite(expected) ? ` of ${expected}` : ''}: it is truncated (${why})`,
      'download',
    );
  }
  // a redirect past the fifth: not the archive
  if (!started) throw new ReleaseError(`${url.href} answered ${statusLine(status)}`, 'download');
  if (Number.isFinite(expected) && bytes !== expected) {
    throw new ReleaseError(`the download of ${url.href} is truncated: ${bytes} bytes of the ${expected} announced`, 'download');
  }
  return { sha256: hash.digest('hex'), bytes };
}

async function fetchSums(http: HttpClient, url: URL): Promise<string> {
  const after = ": the release's checksums are needed to trust the archive";
  const res = await http
    .request<string>({ path: url.href, auth: false, headers: { accept: '*/*' }, followRedirects: true, text: true, maxBodyBytes: 1 << 20 })
    .catch((err: unknown) => {
      throw refusal(url, err, 'sums', after);
    });
  if (res.status >= 300) throw new ReleaseError(`${url.href} answered ${statusLine(res.status)}${after}`, 'sums');
  if (res.truncated) throw new ReleaseError(`${url.href} is over 1 MiB: not a SHA256SUMS file`, 'sums');
  return res.data;
}

/** The SHA-256 SHA256SUMS gives for `name` ("HEX  NAME" or "HEX *NAME" lines). */
export function sumFor(sums: string, name: string): string | undefined {
  for (const line of sums.split(/\r?\n/)) {
    const m = /^([0-9a-fA-F]{64}) [ *](.+)$/.exec(line.trim());
    if (m && m[2] === name) return m[1]!.toLowerCase();
  }
  return undefined;
}

/**
 * Downloads, verifies and caches one release (or returns the cached one). Every refusal is a
 * ReleaseError naming what was wrong; nothing is left in the cache after one.
 */
export async function getRelease(o: GetReleaseOptions): Promise<GotRelease> {
  const plat = o.platform ?? platform();
  const name = archiveName(o.version, plat);
  const top = name.replace(/\.tar\.gz$/, '');
  const dest = join(o.cacheDir, top);
  const have = readManifest(dest);
  if (have?.version === o.version) return { version: o.version, dir: dest, sha256: have.sha256, cached: true };

  const base = o.from ?? RELEASE_BASE;
  const archiveUrl = releaseUrl(base, o.version, name);
  const sumsUrl = releaseUrl(base, o.version, 'SHA256SUMS');
  mkdirSync(o.cacheDir, { recursive: true, mode: 0o700 });
  const work = join(o.cacheDir, `.get-${o.version}-${process.pid}-${randomBytes(4).toString('hex')}`);
  mkdirSync(work, { mode: 0o700 });
  try {
    const http = await mirrorClient(o, base);
    o.note?.(`fetching ${sumsUrl.href}`);
    const sums = await fetchSums(http, sumsUrl);
    const want = sumFor(sums, name);
    if (!want) throw new ReleaseError(`${sumsUrl.href} has no line for ${name}: the archive cannot be verified`, 'sums');
    o.note?.(`downloading ${archiveUrl.href}`);
    const file = join(work, name);
    const got = await download(http, archiveUrl, file);
    if (got.sha256 !== want) {
      throw new ReleaseError(`${name} does not match SHA256SUMS: its SHA-256 is ${got.sha256} (${got.bytes} bytes), SHA256SUMS says ${want}`, 'checksum');
    }
    o.note?.(`SHA-256 verified (${got.sha256}); extracting`);
    const out = join(work, 'release');
    mkdirSync(out, { mode: 0o755 });
    try {
      await extractTarGz(file, top, out, o.signal);
    } catch (err) {
      if (err instanceof ArchiveError) throw new ReleaseError(`${name}: ${err.message}`, 'archive');
      throw err;
    }
    rmSync(file, { force: true });
    const tools = releaseTools(o.version);
    for (const tool of tools) {
      if (!existsSync(join(out, tool)))
        throw new ReleaseError(
          `${name} has no ${top}/${tool}: not an etcd ${o.version} release${tool === 'etcdutl' ? ' (every release from 3.5 ships etcdutl)' : ''}`,
          'archive',
        );
    }
    const v = await binaryVersions(out);
    if (v.etcd !== o.version)
      throw new ReleaseError(`${name}: its etcd --version says ${v.etcd ?? 'nothing (it does not run here)'}, not ${o.version}`, 'version');
    if (v.etcdctl !== o.version)
      throw new ReleaseError(`${name}: its etcdctl version says ${v.etcdctl ?? 'nothing (it does not run here)'}, not ${o.version}`, 'version');
    if (tools.includes('etcdutl') && v.etcdutl !== o.version)
      throw new ReleaseError(`${name}: its etcdutl version says ${v.etcdutl ?? 'nothing (it does not run here)'}, not ${o.version}`, 'version');
    const manifest: ReleaseManifest = { version: o.version, archive: name, sha256: got.sha256, source: archiveUrl.href, fetchedAt: new Date().toISOString() };
    writeFileSync(join(out, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o644 });
    rmSync(dest, { recursive: true, force: true }); // an incomplete one (no manifest) from before
    try {
      renameSync(out, dest);
    } catch (err) {
      // Another `release get` of the same version won the race: theirs is as good as ours.
      const theirs = readManifest(dest);
      if (theirs?.version !== o.version) throw err;
    }
    return { version: o.version, dir: dest, sha256: got.sha256, cached: false };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
