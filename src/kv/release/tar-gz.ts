import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { createReadStream } from 'node:fs';
import { join, posix } from 'node:path';
import { createGunzip } from 'node:zlib';

/** Why an archive could not be extracted (truncated, corrupt, or holding what a release never holds). */
export class ArchiveError extends Error {}

const BLOCK = 512;

function octal(b: Buffer, start: number, len: number): number {
  const f = b.subarray(start, start + len);
  // GNU base-256 for large sizes: the high bit of the first byte set.
  if ((f[0] ?? 0) & 0x80) {
    let n = (f[0] ?? 0) & 0x7f;
    for (let i = 1; i < f.length; i++) n = n * 256 + (f[i] ?? 0);
    return n;
  }
  const s = f.toString('latin1').replace(/\0.*$/s, '').trim();
  if (s === '') return 0;
  if (!/^[0-7]+$/.test(s)) throw new ArchiveError(`a tar header has a bad number field (${JSON.stringify(s)}): the archive is corrupt`);
  return parseInt(s, 8);
}

function text(b: Buffer, start: number, len: number): string {
  const f = b.subarray(start, start + len);
  const nul = f.indexOf(0);
  return f.subarray(0, nul < 0 ? f.length : nul).toString('utf8');
}

function checksumOk(h: Buffer): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : (h[i] ?? 0);
  return sum === octal(h, 148, 8);
}

/** pax extended header records: "LEN key=value\n"… */
function paxPath(data: Buffer): string | undefined {
  let path: string | undefined;
  for (let at = 0; at < data.length;) {
    const space = data.indexOf(0x20, at);
    if (space < 0) break;
    const len = Number(data.subarray(at, space).toString('latin1'));
    if (!Number.isInteger(len) || len <= 0) throw new ArchiveError('a pax header record is malformed: the archive is corrupt');
    const rec = data.subarray(space + 1, at + len - 1).toString('utf8');
    const eq = rec.indexOf('=');
    if (rec.slice(0, eq) === 'path') path = rec.slice(eq + 1);
    at += len;
  }
  return path;
}

/** A member's path, inside the archive's one top directory `top`; anything else is refused. */
function safeRelative(name: string, top: string): string {
  const clean = posix.normalize(name.replace(/^(\.\/)+/, ''));
  // eslint-disable-next-line no-control-regex -- a path with control characters is what this refuses
  if (name.startsWith('/') || clean.startsWith('..') || clean.split('/').includes('..') || /[\0-\x1f]/.test(name)) {
    throw new ArchiveError(`the archive holds an unsafe path ${JSON.stringify(name)}: not an etcd release`);
  }
  const rel = clean === top || clean === `${top}/` ? '' : clean.startsWith(`${top}/`) ? clean.slice(top.length + 1).replace(/\/$/, '') : undefined;
  if (rel === undefined) throw new ArchiveError(`the archive holds ${JSON.stringify(name)} outside ${top}/: not an etcd release`);
  return rel;
}

/**
 * Extracts the regular files and directories under `top/` of a .tar.gz into `dest` (which must exist),
 * streaming (constant memory), modes kept without set-id or group/other write bits. Links, devices,
 * paths outside `top/` or with `..`, a bad header checksum, and an archive that ends early are refused
 * (ArchiveError). Returns the relative paths of the files written.
 */
export async function extractTarGz(archive: string, top: string, dest: string, signal?: AbortSignal): Promise<string[]> {
  const files: string[] = [];
  let pending: Buffer = Buffer.alloc(0);
  let longName: string | undefined;
  let paxName: string | undefined;
  // The entry whose data is being read: its remaining bytes, the padding after it, and where it goes.
  let entry: { remaining: number; pad: number; fd?: number; collect?: Buffer[]; kind: 'file' | 'longname' | 'pax' | 'skip' } | undefined;
  let ended = false;

  const startEntry = (h: Buffer) => {
    if (!checksumOk(h)) throw new ArchiveError('a tar header checksum does not match: the archive is corrupt');
    const type = String.fromCharCode(h[156] ?? 0);
    const size = octal(h, 124, 12);
    const pad = (BLOCK - (size % BLOCK)) % BLOCK;
    if (type === 'L') return void (entry = { remaining: size, pad, collect: [], kind: 'longname' });
    if (type === 'x') return void (entry = { remaining: size, pad, collect: [], kind: 'pax' });
    if (type === 'g') return void (entry = { remaining: size, pad, kind: 'skip' });
    const ustarPrefix = text(h, 257, 6) === 'ustar' ? text(h, 345, 155) : '';
    const name = paxName ?? longName ?? (ustarPrefix ? `${ustarPrefix}/${text(h, 0, 100)}` : text(h, 0, 100));
    paxName = longName = undefined;
    const rel = safeRelative(name, top);
    if (type === '5') {
      if (rel) mkdirSync(join(dest, rel), { recursive: true, mode: 0o755 });
      return void (entry = { remaining: size, pad, kind: 'skip' });
    }
    if (type !== '0' && type !== '\0' && type !== '7') {
      throw new ArchiveError(`the archive holds ${JSON.stringify(name)} of tar type ${JSON.stringify(type)} (a link or device): not an etcd release`);
    }
    if (!rel) throw new ArchiveError(`the archive holds a file named like its top directory ${top}: not an etcd release`);
    mkdirSync(join(dest, posix.dirname(rel)), { recursive: true, mode: 0o755 });
    // 'wx': a second entry of the same path is refused, and nothing is written through a link.
    const fd = openSync(join(dest, rel), 'wx', octal(h, 100, 8) & 0o755);
    files.push(rel);
    entry = { remaining: size, pad, fd, kind: 'file' };
  };

  const finishEntry = () => {
    if (!entry) return;
    if (entry.fd !== undefined) closeSync(entry.fd);
    if (entry.kind === 'longname')
      longName = Buffer.concat(entry.collect ?? [])
        .toString('utf8')
        .replace(/\0+$/, '');
    if (entry.kind === 'pax') paxName = paxPath(Buffer.concat(entry.collect ?? []));
    entry = undefined;
  };

  const gunzip = createReadStream(archive).pipe(createGunzip());
  try {
    for await (const chunk of gunzip as AsyncIterable<Buffer>) {
      signal?.throwIfAborted();
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      for (;;) {
        if (ended) break;
        if (entry) {
          if (entry.remaining > 0) {
            if (!pending.length) break;
            const part = pending.subarray(0, Math.min(entry.remaining, pending.length));
            if (entry.fd !== undefined) writeSync(entry.fd, part);
            else entry.collect?.push(Buffer.from(part));
            entry.remaining -= part.length;
            pending = pending.subarray(part.length);
            continue;
          }
          if (pending.length < entry.pad) break;
          pending = pending.subarray(entry.pad);
          finishEntry();
          continue;
        }
        if (pending.length < BLOCK) break;
        const h = pending.subarray(0, BLOCK);
        pending = pending.subarray(BLOCK);
        if (h.every((b) => b === 0)) {
          ended = true;
          break;
        }
        startEntry(h);
      }
    }
  } catch (err) {
    if (entry?.fd !== undefined) closeSync(entry.fd);
    if (err instanceof ArchiveError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'Z_BUF_ERROR' || code === 'Z_DATA_ERROR' || /unexpected end of file|incorrect header check/i.test((err as Error).message)) {
      throw new ArchiveError(`the archive is truncated or not gzip (${(err as Error).message})`);
    }
    throw err;
  }
  if (!ended) {
    if (entry?.fd !== undefined) closeSync(entry.fd);
    throw new ArchiveError(
      `the archive ends early (${entry ? `inside ${JSON.stringify(files[files.length - 1] ?? 'a header')}` : 'without its end blocks'}): it is truncated`,
    );
  }
  return files;
}
