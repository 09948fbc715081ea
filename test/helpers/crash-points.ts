import { execa } from 'execa';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MEMBER_STEPS } from '../../src/kv/cluster/types.js';

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
 *
 * The states are named by the listing run's members, but a new cluster may elect another leader, and a hop
 * takes its members followers first, the leader last: a state with a member is killed at by its place, not
 * its name (the same call on any member, the Nth such point after the previous state as the listing passed
 * them), until a kill shows which member of this cluster the listing's name stands for (one each way, per
 * cluster); from then on by that member's name. A state reached on a fresh cluster is said on the output.
 * Each run's wall time is returned; OPSCTL_CRASH_TRACE_DIR=DIR keeps each run's debug lines there, timed.
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
  /** Each run's wall time: the listing run, each killed run (by the state it was killed at), the last. */
  times: Array<{ run: string; ms: number }>;
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

/** The member a driver call's point names ("3.5→3.6 after stop etcd2 (changes)": etcd2); none for a journal write. */
function memberOf(point: string): string | undefined {
  return /^\S+ after (?!journal )\S+ (\S+) \(changes\)$/.exec(point)?.[1];
}

/** A state's words with its member as any member (* in OPSCTL_CRASH_AT), and the fixture's reading of them. */
function generic(state: string): string {
  return memberOf(state) ? state.replace(/ \S+ \(changes\)$/, ' * (changes)') : state;
}
function matcher(state: string): RegExp {
  return new RegExp(
    `^${generic(state)
      .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '[^ ]*')}$`,
  );
}

/**
 * OPSCTL_CRASH_AT for `state`, in a run that goes on from the listing's point `from`: its words, with its
 * member as this cluster's (`names`: the listing's member → this cluster's, where a kill showed it) or any
 * member, and the Nth such point after `from` as the listing passed them.
 */
function crashAt(points: string[], state: string, from: number, names: Map<string, string>): string {
  const member = memberOf(state);
  const known = member && names.get(member);
  const words = known ? state.replace(/ \S+ \(changes\)$/, ` ${known} (changes)`) : generic(state);
  const like = known ? (p: string) => p === state : (p: string) => matcher(state).test(p);
  const n = 1 + points.slice(from, points.indexOf(state)).filter(like).length;
  return n === 1 ? words : `${words}#${n}`;
}

/** The words a run was killed at (the fixture says them), if it was. */
function killedAt(r: Run): string | undefined {
  return r.signal === 'SIGKILL' ? /^opsctl-test: killed at (.*)$/m.exec(r.stderr)?.[1] : undefined;
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
    const times: Sweep['times'] = [];
    const traceDir = process.env.OPSCTL_CRASH_TRACE_DIR;
    const timed = async (run: string, env: Record<string, string>) => {
      const t0 = performance.now();
      const r = await crashRun(
        o.args,
        { ...env, ...(traceDir ? { OPSCTL_CRASH_TRACE: join(traceDir, `${basename(tmp)}-${String(times.length).padStart(3, '0')}`) } : {}) },
        o.timeoutMs,
      );
      times.push({ run, ms: Math.round(performance.now() - t0) });
      return r;
    };
    await o.reset();
    const listed = await timed('listing', { ...o.env, OPSCTL_CRASH_LOG: logFile });
    if (!finished(listed)) throw new Error(`the run that lists the points did not finish (exit ${listed.exitCode ?? listed.signal}):\n${listed.stderr}`);
    const points = readFileSync(logFile, 'utf8').split('\n').filter(Boolean);
    const all = crashStates(points);
    const states = all.filter((s) => s !== 'start' && (o.only?.(s, all) ?? true));
    await o.reset();
    const reached: Sweep['reached'] = [];
    let runs = 1;
    const names = new Map<string, string>();
    // (a state's member as the listing named it, and as the words of this cluster's kill name it: one each way, per cluster)
    const fits = (s: string, words: string | undefined) => {
      if (!words || !matcher(s).test(words)) return false;
      const [a, b] = [memberOf(s), memberOf(words)];
      if (!a || !b) return words === s;
      if ((names.get(a) ?? b) !== b || (!names.has(a) && [...names.values()].includes(b))) return false;
      names.set(a, b);
      return true;
    };
    // (the resume of the chain goes on from the previous state: the Nth point like this one after it in the listing)
    let from = 0;
    for (const s of states) {
      let r = await timed(s, { ...o.env, OPSCTL_CRASH_AT: crashAt(points, s, from, names) });
      runs++;
      if (fits(s, killedAt(r))) reached.push({ state: s, how: 'chain' });
      else {
        // The resume took another path (or finished): this state on a fresh cluster, then the chain goes on from it.
        if (r.signal && !killedAt(r)) throw new Error(`the run for ${s} ended by ${r.signal}, not at a point:\n${r.stderr}`);
        if (!r.signal && !finished(r)) throw new Error(`the resume before ${s} failed (exit ${r.exitCode}):\n${r.stderr}`);
        const how = r.signal ? `killed at ${killedAt(r)}` : `exit ${r.exitCode}`;
        console.log(`crash sweep: the resume before "${s}" took another path (${how}): that state on a fresh cluster`);
        await o.reset();
        names.clear();
        r = await timed(`${s} (fresh)`, { ...o.env, OPSCTL_CRASH_AT: crashAt(points, s, 0, names) });
        runs++;
        if (!fits(s, killedAt(r))) throw new Error(`a fresh run never reached ${s} (exit ${r.exitCode ?? r.signal}):\n${r.stderr}`);
        reached.push({ state: s, how: 'reset' });
      }
      from = points.indexOf(s) + 1;
      await o.afterKill?.(s);
    }
    const last = await timed('last', o.env);
    runs++;
    return { points: points.length, states, reached, runs, last, times };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

export const POSITIONS = ['first', 'middle', 'last'] as const;
export type Position = (typeof POSITIONS)[number];

/**
 * One hop's states (those of its point context, "3.5→3.6") by member position: its members in the order
 * a fresh run stopped them (first, middle, last), and each state as the member the resume works on next
 * (its driver calls; a journal write by the first step it leaves undone, the journal listing MEMBER_STEPS
 * per member), or 'cluster' (the hop's own steps after its members', the ladder's records); undefined:
 * another part of the run.
 */
export function byPosition(states: string[], hop: string): { names: Record<Position, string>; of: (state: string) => Position | 'cluster' | undefined } {
  const mine = states.filter((x) => x.startsWith(`${hop} `));
  const order = mine.map((x) => / after stop (\S+) \(changes\)$/.exec(x)?.[1]).filter((x): x is string => Boolean(x));
  if (order.length < 3) throw new Error(`the hop ${hop} stops ${order.length} members (${order.join(', ')}): first, middle and last need 3`);
  const posOf = (name: string): Position => (name === order[0] ? 'first' : name === order.at(-1) ? 'last' : 'middle');
  const undone = (x: string) =>
    / after journal \S+ \w+:(\S+) \(changes\)$/
      .exec(x)?.[1]
      ?.split('.')
      .findIndex((t) => t !== 'do');
  // (the journal's own order of members: the slot of the step its write before each stop leaves running)
  const slots = new Map<number, string>();
  mine.forEach((x, i) => {
    const name = / after stop (\S+) \(changes\)$/.exec(x)?.[1];
    const before = name ? undone(mine[i - 1] ?? '') : undefined;
    if (name && before !== undefined && before >= 0) slots.set(Math.floor(before / MEMBER_STEPS.length), name);
  });
  return {
    names: { first: order[0]!, middle: order[1]!, last: order.at(-1)! },
    of: (x) => {
      if (!x.startsWith(`${hop} `)) return undefined;
      const call = / after (?!journal )\S+ (\S+) \(changes\)$/.exec(x)?.[1];
      if (call && order.includes(call)) return posOf(call);
      if (/ after journal ladder\.json /.test(x)) return 'cluster';
      const i = undone(x);
      const slot = i === undefined || i < 0 ? undefined : slots.get(Math.floor(i / MEMBER_STEPS.length));
      return slot ? posOf(slot) : 'cluster';
    },
  };
}

/** "first etcd2: 8 states, middle etcd3: 7, …": what a sweep killed at, by member position. */
export function positionsText(states: string[], hop: string): string {
  const p = byPosition(states, hop);
  const count = (x: Position | 'cluster') => states.filter((s) => p.of(s) === x).length;
  return [...POSITIONS.map((x) => `${x} ${p.names[x]} ${count(x)}`), `cluster ${count('cluster')}`].join(', ');
}
