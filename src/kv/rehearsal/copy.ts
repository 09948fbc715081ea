/**
 * The rehearsal's copy of the members on this machine: every member's process paused at once (SIGSTOP), its
 * files copied, every process resumed (SIGCONT) on any exit of the copy's shell, opsctl's death included (the
 * shell is a session of its own and finishes the copy). A copy of processes paused together is what a power
 * cut would leave of every member at one instant, which etcd recovers from by design; a copy of live members
 * under writes is not. Every client of the cluster waits while the members are paused, so the pause copies
 * only what etcd wrote:
 * - a directory is made with its files' attributes first (`cp -a --attributes-only`), then each file's data,
 *   sparse (COPY_FILE);
 * - etcd's next WAL segment, preallocated and not begun (`N.tmp` beside `*.wal` files: 64 MB of zeros that
 *   `cp` would read), is given its size only, its times kept: etcd never reads a `.tmp` segment back;
 * - the segment etcd appends to (the newest `*.wal` of a WAL directory, preallocated to 64 MB) is copied
 *   here, beside the shell's `cp` of the rest, up to its records' end (kv/wal/wal-records.ts recordsEnd),
 *   its size kept by a hole: on a fresh member 20 KB read instead of 64 MB, whose first read makes the
 *   kernel zero every page of it (350 ms of pause for three members, measured).
 * PIDs are numbers and paths are arguments, never the script's text.
 */
import { spawn } from 'node:child_process';
import { closeSync, fstatSync, ftruncateSync, futimesSync, lstatSync, openSync, readdirSync, readSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { recordsEnd } from '../wal/wal-records.js';

/**
 * One directory's files (`sh -c FILE sh SKIP SRC DEST FILE…`, the tree already made with every file empty and
 * its attributes): each one's data copied, sparse; a preallocated next WAL segment given its size only; a
 * file of SKIP (newline-separated paths: the segments opsctl copies itself) left to opsctl.
 */
const COPY_FILE = [
  'skip=$1 s=$2 d=$3',
  'shift 3',
  'for f; do',
  '  case "',
  '$skip',
  '" in *"',
  '$f',
  '"*) continue ;; esac',
  '  t=$d${f#"$s"}',
  '  w=',
  '  case ${f##*/} in [0-9]*.tmp) for x in "${f%/*}"/*.wal; do [ -e "$x" ] && w=1; break; done ;; esac',
  '  if [ -n "$w" ]; then truncate -s "$(stat -c %s -- "$f")" -- "$t" && touch -r "$f" -- "$t"; else cp -a --sparse=always -- "$f" "$t"; fi',
  'done',
].join('\n');

/** Said on standard output once every tree is made (opsctl then copies its segments), and once the shell's part is done. */
const TREE = 'opsctl-copy: tree';

/**
 * The copy: pause, the trees (a path that is not a directory: copied whole; a directory into its copy's directory
 * where that is made already), TREE, each directory's files,
 * then the pause held until the input ends (opsctl's part done, or opsctl gone), and resumed on exit.
 */
const COPY = [
  'n=$1 file=$2 skip=$3',
  'shift 3',
  'pids=',
  'while [ "$n" -gt 0 ]; do pids="$pids $1"; shift; n=$((n - 1)); done',
  "trap 'kill -CONT $pids 2>/dev/null' EXIT",
  "trap 'exit 1' HUP INT TERM",
  '[ -z "$pids" ] || kill -STOP $pids',
  'i=0',
  'for a; do',
  '  if [ $((i % 2)) -eq 0 ]; then s=$a',
  // (a directory made already, as the clone's mount point of a copy: its contents go into it)
  '  elif [ -d "$s" ] && [ ! -L "$s" ] && [ -d "$a" ]; then cp -a --attributes-only -- "$s/." "$a" || exit 1',
  '  else',
  '    mkdir -p "$a"; rmdir "$a"',
  '    if [ -d "$s" ] && [ ! -L "$s" ]; then cp -a --attributes-only -- "$s" "$a" || exit 1; else cp -a --sparse=always -- "$s" "$a" || exit 1; fi',
  '  fi',
  '  i=$((i + 1))',
  'done',
  `echo '${TREE}'`,
  'i=0',
  'for a; do',
  '  if [ $((i % 2)) -eq 0 ]; then s=$a; elif [ -d "$s" ] && [ ! -L "$s" ]; then',
  '    find "$s" -type f -exec sh -c "$file" sh "$skip" "$s" "$a" {} + || exit 1',
  '  fi',
  '  i=$((i + 1))',
  'done',
  'cat >/dev/null',
].join('\n');

/**
 * The copy as a command: `pause` the PIDs paused for it, `pairs` each source path and its copy's path, `skip`
 * the files opsctl copies itself once the shell says TREE (a session of its own: setsid).
 */
export function copyCommand(pause: readonly string[], pairs: readonly string[], skip: readonly string[] = []): [string, string[]] {
  return ['setsid', ['-w', 'sh', '-c', COPY, 'sh', String(pause.length), COPY_FILE, skip.join('\n'), ...pause, ...pairs]];
}

const SEGMENT = /^[0-9a-f]{16}-[0-9a-f]{16}\.wal$/;

/** The segment etcd appends to in each WAL directory under the pairs' sources (its newest `*.wal`), and where its copy goes. */
export function newestSegments(pairs: readonly string[]): Array<{ from: string; to: string }> {
  const out: Array<{ from: string; to: string }> = [];
  for (let i = 0; i + 1 < pairs.length; i += 2) {
    const [s, d] = [pairs[i]!, pairs[i + 1]!];
    if (!lstatSync(s, { throwIfNoEntry: false })?.isDirectory()) continue;
    const newest = new Map<string, string>();
    for (const rel of readdirSync(s, { recursive: true, encoding: 'utf8' })) {
      if (!SEGMENT.test(basename(rel))) continue;
      const dir = dirname(rel);
      if ((newest.get(dir) ?? '') < rel) newest.set(dir, rel);
    }
    for (const rel of newest.values()) {
      // (a path the shell's list cannot carry, or not a plain file: the shell copies it as any other)
      if (rel.includes('\n') || !lstatSync(join(s, rel)).isFile()) continue;
      out.push({ from: join(s, rel), to: join(d, rel) });
    }
  }
  return out;
}

const CHUNK = 1024 * 1024;
const ZERO = Buffer.alloc(CHUNK);

/**
 * A WAL segment's copy into `to` (made by the tree, empty, its attributes set): its bytes up to its records'
 * end, its size kept by a hole, its times the segment's. Where the frames do not end inside it, or the bytes
 * after their end are not zeros, every byte of it (all-zero chunks left as holes). The bytes read.
 */
export function copySegment(from: string, to: string): number {
  const src = openSync(from, 'r');
  try {
    const dst = openSync(to, 'r+');
    try {
      const st = fstatSync(src);
      const buf = Buffer.allocUnsafe(CHUNK);
      let end = recordsEnd(src, st.size);
      if (end !== undefined && end < st.size) {
        const n = readSync(src, buf, 0, Math.min(4096, st.size - end), end);
        if (!buf.subarray(0, n).equals(ZERO.subarray(0, n))) end = undefined;
      }
      const upTo = end ?? st.size;
      for (let pos = 0; pos < upTo;) {
        const n = readSync(src, buf, 0, Math.min(CHUNK, upTo - pos), pos);
        if (n === 0) break;
        if (end !== undefined || !buf.subarray(0, n).equals(ZERO.subarray(0, n))) writeSync(dst, buf, 0, n, pos);
        pos += n;
      }
      ftruncateSync(dst, st.size);
      futimesSync(dst, st.atime, st.mtime);
      return upTo;
    } finally {
      closeSync(dst);
    }
  } finally {
    closeSync(src);
  }
}

export type Copied = { ok: true; pausedMs: number; segments: number } | { ok: false; words: string };

/**
 * The copy of `pairs` (source, copy) with the PIDs `pause` paused for it: the shell's part and opsctl's (the
 * segments etcd appends to) at once, the pause held until both are done. Never throws: a failure is cp's
 * (or the segment's) words, every member resumed.
 */
export async function copyPaused(pause: readonly string[], pairs: readonly string[], now: () => number): Promise<Copied> {
  let segments: Array<{ from: string; to: string }>;
  try {
    segments = newestSegments(pairs);
  } catch (err) {
    return { ok: false, words: (err as Error).message };
  }
  const [cmd, args] = copyCommand(
    pause,
    pairs,
    segments.map((s) => s.from),
  );
  const started = now();
  const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  let mine: string | undefined;
  child.stderr.setEncoding('utf8').on('data', (s: string) => void (stderr += s));
  child.stdin.on('error', () => undefined);
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => {
    out += s;
    if (!out.includes(`${TREE}\n`) || mine !== undefined) return;
    mine = '';
    try {
      for (const s of segments) copySegment(s.from, s.to);
    } catch (err) {
      mine = (err as Error).message;
    }
    child.stdin.end();
  });
  const code = await new Promise<number | string>((resolve) => {
    child.on('error', (err) => resolve(err.message));
    child.on('close', (c, signal) => resolve(c ?? signal ?? '?'));
  });
  child.stdin.destroy();
  if (code === 0 && mine === '') return { ok: true, pausedMs: now() - started, segments: segments.length };
  const words = [...stderr.trim().split('\n').filter(Boolean).slice(-3), ...(mine ? [mine] : [])].join('; ');
  return { ok: false, words: words || `exit ${code}` };
}
