/**
 * The rehearsal's copy of members on other hosts (kv/rehearsal/clone-away.ts found them): each member's files
 * streamed here by the driver's own way onto its host (the trial template, `ssh {host} sudo sh -s`), every
 * member paused at once. Each host runs FETCH: it pauses its member (SIGSTOP), streams the member's paths
 * as a tar archive, closes its output and then HOLDS the pause until its input ends. opsctl ends every
 * host's input only once every archive is in, so at one instant every member is paused and every copy is
 * what that member held then: what a power cut would leave of the cluster, which etcd recovers from by
 * design. The input's end is a dead-man's switch: a killed opsctl (kill -9 included) closes its pipes, the
 * connection's end ends the input, and the host resumes its member (the trap on EXIT, on HUP too).
 */
import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { shellWord } from '../drivers/host-script.js';

/** One member to fetch: how to reach its host, its process and the paths to copy (absolute, as its host has them). */
export interface FetchSpec {
  readonly member: string;
  /** The program and arguments that run a script given on standard input on the member's host (`ssh HOST sudo sh -s`). */
  readonly argv: readonly string[];
  readonly pid: number;
  readonly paths: readonly string[];
}

const PAUSED = 'opsctl-fetch: paused';

/**
 * The script a host runs (its values quoted as words, never code): pause, archive, hold until the input
 * ends, resume. etcd's next WAL segment, preallocated and not begun (`N.tmp`), is left out: etcd never reads
 * it back and preallocates its own at start.
 */
export function fetchScript(pid: number, paths: readonly string[]): string {
  if (!Number.isSafeInteger(pid) || pid <= 1) throw new Error(`fetchScript: ${pid} is not a member's PID`);
  const rel = paths.map((p) => shellWord(p.replace(/^\/+/, '') || '.'));
  return [
    `pid=${pid}`,
    `kill -0 "$pid" || { echo "opsctl-fetch: the member's process $pid is gone" >&2; exit 3; }`,
    `trap 'kill -CONT "$pid" 2>/dev/null' EXIT`,
    `trap 'exit 1' HUP INT TERM PIPE`,
    `kill -STOP "$pid" || exit 3`,
    `echo '${PAUSED}' >&2`,
    `tar -C / -c -f - --sparse --exclude='*/wal/[0-9]*.tmp' -- ${rel.join(' ')} || exit 4`,
    'exec >&-',
    'cat >/dev/null',
    '',
  ].join('\n');
}

export interface Fetched {
  readonly ok: boolean;
  /** Why not, in the hosts' and tar's own words (every member resumed). */
  readonly why?: string;
  /** From the first host's pause to the last archive in. */
  readonly pausedMs: number;
}

/**
 * Fetches every member into `dest(member)` under one pause (see above). Whatever happens, every host's input
 * is ended (its member resumed) before this returns; a host that does not exit within `timeoutMs` after is killed.
 */
export async function fetchMembers(
  specs: readonly FetchSpec[],
  dest: (member: string) => string,
  o: { timeoutMs: number; signal?: AbortSignal },
): Promise<Fetched> {
  const started = Date.now();
  let firstPause: number | undefined;
  const hosts: Array<ReturnType<typeof spawn>> = [];
  // (a host that never answers, or a cancel: every host's run killed, which ends its archive and its pause)
  const killAll = () => hosts.forEach((h) => h.kill('SIGKILL'));
  const killer = setTimeout(killAll, o.timeoutMs);
  o.signal?.addEventListener('abort', killAll, { once: true });
  const runs = await Promise.all(
    specs.map(async (s) => {
      const to = dest(s.member);
      await mkdir(to, { recursive: true });
      const [program, ...args] = s.argv;
      const host = spawn(program!, args, { stdio: ['pipe', 'pipe', 'pipe'] });
      hosts.push(host);
      const tar = spawn('tar', ['-x', '-p', '-f', '-', '-C', to], { stdio: ['pipe', 'ignore', 'pipe'] });
      host.stdout.pipe(tar.stdin);
      // (a pipe closed early by tar, or by a host that ended: their exits say why)
      host.stdin.on('error', () => undefined);
      tar.stdin.on('error', () => undefined);
      let err = '';
      let tarErr = '';
      host.stderr.on('data', (b: Buffer) => {
        err += String(b);
        if (firstPause === undefined && err.includes(PAUSED)) firstPause = Date.now();
      });
      tar.stderr.on('data', (b: Buffer) => void (tarErr += String(b)));
      const hostExit = exitOf(host);
      host.stdin.write(fetchScript(s.pid, s.paths));
      const tarCode = await exitOf(tar);
      return { s, host, hostExit, tarCode, err: () => err, tarErr: () => tarErr };
    }),
  ).catch((e: Error) => e);
  if (runs instanceof Error) {
    killAll();
    clearTimeout(killer);
    return { ok: false, why: runs.message, pausedMs: 0 };
  }
  const pausedMs = Date.now() - (firstPause ?? started);
  // every archive is in (or failed): each host's input ends, and each member resumes
  for (const r of runs) r.host.stdin.end();
  const codes = await Promise.all(runs.map((r) => r.hostExit));
  clearTimeout(killer);
  o.signal?.removeEventListener('abort', killAll);
  const bad = runs
    .map((r, i) => ({ r, code: codes[i] }))
    .filter(({ r, code }) => r.tarCode !== 0 || code !== 0 || !r.err().includes(PAUSED))
    .map(({ r, code }) => {
      // (the host's own words first: tar's are only the echo of an archive that never came)
      const lines = (t: string) =>
        t
          .split('\n')
          .map((l) => l.trim())
          .filter((l) => l && l !== PAUSED)
          .slice(-2);
      const words = (lines(r.err()).length ? lines(r.err()) : lines(r.tarErr())).join('; ');
      return `${r.s.member}: \`${r.s.argv.join(' ')}\` exit ${code ?? '?'}, tar exit ${r.tarCode ?? '?'}${words ? ` (${words})` : ''}`;
    });
  if (o.signal?.aborted) return { ok: false, why: 'cancelled', pausedMs };
  return bad.length ? { ok: false, why: bad.join('; '), pausedMs } : { ok: true, pausedMs };
}

function exitOf(p: ReturnType<typeof spawn>): Promise<number | undefined> {
  return new Promise((res) => {
    p.once('error', () => res(undefined));
    p.once('close', (code) => res(code ?? undefined));
  });
}
