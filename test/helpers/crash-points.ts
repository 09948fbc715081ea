import { execa } from 'execa';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The crash-point harness (issue 44): opsctl is killed (SIGKILL, from inside, test/fixtures/opsctl-crash.cjs)
 * at each point of a run in turn, and the identical command is run again.
 *
 * The kv verbs say a point before and after every driver call and every journal write. Two points with
 * nothing that changes the world between them leave the same state (the journal on disk, the members), so
 * the states to kill at are: before the first point, and after each call or write that changes something
 * (marked "(changes)"), in the order a fresh run passes them. The sweep walks them as a chain: the run
 * killed at state k is resumed by the identical command, which is itself killed at state k+1 (a resume
 * must get past state k to reach it). A state the chain cannot reach (a resume takes another path) is
 * reached on a fresh cluster instead (`reset`), and then resumed: no state is skipped. The last run is
 * not killed and must finish. Every point seen and every state killed at are counted and returned.
 */
export const CRASH = fileURLToPath(new URL('../fixtures/opsctl-crash.cjs', import.meta.url));

export interface Run {
  exitCode?: number;
  signal?: string;
  stdout: string;
  stderr: string;
}

export interface Sweep {
  /** Every point a fresh run passes (before and after each driver call and journal write). */
  points: number;
  /** The states killed at, in order (each "after … (changes)", and the start). */
  states: string[];
  /** How each state was reached: in the chain, or on a fresh cluster (reset) when a resume took another path. */
  reached: Array<{ state: string; how: 'chain' | 'reset' }>;
  /** The runs that made the sweep. */
  runs: number;
  /** The last run's result (not killed). */
  last: Run;
}

/** opsctl with the crash fixture: args as the command line, env added to the process's. */
export async function crashRun(args: string[], env: Record<string, string>, timeoutMs = 300_000): Promise<Run> {
  const r = await execa(process.execPath, [CRASH, ...args], { reject: false, env: { NO_COLOR: '1', CI: '1', ...env }, extendEnv: true, timeout: timeoutMs });
  return { exitCode: r.exitCode, signal: r.signal, stdout: String(r.stdout), stderr: String(r.stderr) };
}

/** The states of a fresh run's points: where a kill leaves something no earlier kill does. */
export function crashStates(points: string[]): string[] {
  const out = ['start'];
  // (a point's words: the part of the run, then "after stop kv2 (changes)")
  for (const p of points) if (/^\S+ after /.test(p) && p.endsWith(' (changes)') && !out.includes(p)) out.push(p);
  return out;
}

export async function sweep(o: {
  /** The identical command (the verb and its flags). */
  args: string[];
  env: Record<string, string>;
  /** Puts the cluster back where a fresh run starts (a new sandbox, the journals gone). */
  reset: () => Promise<void>;
  /** Called after each kill (the monitor's invariants, the journal readable …). */
  afterKill?: (state: string) => Promise<void> | void;
  /** Only the states this says yes to (a member's, a hop's; `all`: every state in a fresh run's order); the others are passed by the chain unkilled. */
  only?: (state: string, all: string[]) => boolean;
  /** How an unkilled run ends when all is well (default: exit 0); --on-failure rollback's halt is exit 3. */
  finishes?: (r: Run) => boolean;
  timeoutMs?: number;
}): Promise<Sweep> {
  const finished = o.finishes ?? ((r: Run) => r.exitCode === 0);
  const tmp = mkdtempSync(join(tmpdir(), 'opsctl-crash-'));
  try {
    const logFile = join(tmp, 'points');
    await o.reset();
    const listed = await crashRun(o.args, { ...o.env, OPSCTL_CRASH_LOG: logFile }, o.timeoutMs);
    if (!finished(listed)) throw new Error(`the run that lists the points did not finish (exit ${listed.exitCode ?? listed.signal}):\n${listed.stderr}`);
    const points = readFileSync(logFile, 'utf8').split('\n').filter(Boolean);
    const all = crashStates(points);
    const states = all.filter((s) => s !== 'start' && (o.only?.(s, all) ?? true));
    await o.reset();
    const reached: Sweep['reached'] = [];
    let runs = 1;
    const killed = (r: Run, s: string) => r.signal === 'SIGKILL' && r.stderr.includes(`opsctl-test: killed at ${s}`);
    for (const s of states) {
      let r = await crashRun(o.args, { ...o.env, OPSCTL_CRASH_AT: s }, o.timeoutMs);
      runs++;
      if (killed(r, s)) reached.push({ state: s, how: 'chain' });
      else {
        // The resume took another path (or finished): this state on a fresh cluster, then the chain goes on from it.
        if (r.signal) throw new Error(`the run for ${s} ended by ${r.signal}, not at the point:\n${r.stderr}`);
        if (!finished(r)) throw new Error(`the resume before ${s} failed (exit ${r.exitCode}):\n${r.stderr}`);
        await o.reset();
        r = await crashRun(o.args, { ...o.env, OPSCTL_CRASH_AT: s }, o.timeoutMs);
        runs++;
        if (!killed(r, s)) throw new Error(`a fresh run never reached ${s} (exit ${r.exitCode ?? r.signal}):\n${r.stderr}`);
        reached.push({ state: s, how: 'reset' });
      }
      await o.afterKill?.(s);
    }
    const last = await crashRun(o.args, o.env, o.timeoutMs);
    runs++;
    return { points: points.length, states, reached, runs, last };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
