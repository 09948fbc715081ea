/**
 * `kv upgrade`'s rehearsal, the command's part: the port that runs opsctl itself inside the clone (the
 * same verb with the hop's binaries, in its clone mode), and that clone mode: the clone's members started
 * as the driver starts them, its load, and the load's account added to the report.
 */
import type { Context } from '../../../context.js';
import { isSea } from '../../../core/sea.js';
import type { KvSession } from '../../../kv/cluster/session.js';
import type { ClusterSpec } from '../../../kv/cluster/cluster-file.js';
import type { CloneLook, MemberDriver } from '../../../kv/drivers/driver.js';
import type { MemberSpec } from '../../../kv/cluster/cluster-file.js';
import { COPY_READY, JUDGED, parseJudged, rehearseOnClone, selfCommand, type JudgedReads, type RehearsalVerdict } from '../../../kv/rehearsal/clone.js';
import { OpsError, UsageError } from '../../../core/errors.js';
import type { RehearseHow } from '../../../kv/ladder/record.js';

/** The upgrade flags the clone's run repeats (timings and judgement; never the question, the backups, the report or the off-host store). */
interface Repeated {
  to: string;
  allowSameVersion?: boolean;
  defrag?: boolean;
  strict?: boolean;
  fixV2store?: boolean;
  onFailure?: string;
  pollInterval?: string;
  stopTimeout?: string;
  healthyTimeout?: string;
  requestTimeout?: string;
  clusterVersionTimeout?: string;
  trialTimeout?: string;
  snapshotVia?: string;
}

/** The rehearsal port of a run whose driver can clone its members (else undefined: the plan says why). */
export function rehearsalPort(
  ctx: Context,
  opts: Repeated,
  ignoreChecks: string[],
  driver: MemberDriver | undefined,
  exec: typeof import('execa').execa,
  /** The flags that find the cluster (--cluster FILE, --endpoints and templates; none for the sandbox): the clone's run finds the same one. */
  selector: readonly string[] = [],
) {
  const c = driver?.clonable?.();
  if (!c || 'why' in c) return undefined;
  const flag = (name: string, v: string | undefined) => (v === undefined ? [] : [`--${name}`, v]);
  return (bins: Record<string, string | undefined>, { signal, judged, copied }: RehearseHow = {}): Promise<RehearsalVerdict> => {
    const dirs = Object.entries(bins).filter((e): e is [string, string] => Boolean(e[1]));
    const command = [
      ...selfCommand({ execPath: process.execPath, sea: isSea(), here: import.meta.dirname }),
      'kv',
      'upgrade',
      '--to',
      opts.to,
      ...dirs.flatMap(([v, d]) => ['--target-bin', `${v}=${d}`]),
      ...selector,
      '--rehearsal-clone',
      // (--debug: the clone's own lines follow the parent's, each said as the clone's)
      ...(ctx.debugSink ? ['--debug'] : []),
      '--yes',
      '--no-input',
      '--json',
      '--no-backup',
      '--settle',
      '0s',
      ...(opts.allowSameVersion ? ['--allow-same-version'] : []),
      ...(opts.defrag ? ['--defrag'] : []),
      ...(opts.strict ? ['--strict'] : []),
      ...(opts.fixV2store === false ? ['--no-fix-v2store'] : []),
      ...ignoreChecks.flatMap((id) => ['--ignore-check', id]),
      ...flag('on-failure', opts.onFailure),
      ...flag('poll-interval', opts.pollInterval),
      ...flag('stop-timeout', opts.stopTimeout),
      ...flag('healthy-timeout', opts.healthyTimeout),
      ...flag('request-timeout', opts.requestTimeout),
      ...flag('cluster-version-timeout', opts.clusterVersionTimeout),
      ...flag('trial-timeout', opts.trialTimeout),
      ...flag('snapshot-via', opts.snapshotVia),
    ];
    const verdict = rehearseOnClone({
      source: {
        dataDir: ctx.paths.data,
        paths: c.paths,
        keep: dirs.map(([, d]) => d),
        ...(c.pause ? { pause: c.pause } : {}),
        ...(c.outside ? { outside: c.outside } : {}),
        ...(c.files ? { files: c.files } : {}),
        ...(c.addresses ? { addresses: c.addresses } : {}),
        ...(c.engineRuns ? { engineRuns: true } : {}),
        ...(c.fetch ? { fetch: c.fetch } : {}),
        ...(c.mountPoints ? { mountPoints: c.mountPoints } : {}),
      },
      ...(c.operatorCwd ? { cwd: ctx.cwd } : {}),
      command,
      env: { ...ctx.env, CI: '1' },
      exec,
      signal: signal ? AbortSignal.any([ctx.abort.signal, signal]) : ctx.abort.signal,
      timeoutMs: 30 * 60_000,
      now: ctx.now,
      uid: process.getuid?.(),
      ...(ctx.debugSink ? { debug: ctx.debugSink } : {}),
      ...(judged ? { judged } : {}),
      ...(copied ? { copied } : {}),
    });
    // (what the clone left outside its copy, an engine's containers, removed whatever the verdict)
    const cloning = driver?.cloning;
    if (!cloning?.drop) return verdict;
    return verdict.finally(async () => {
      const gone = await cloning.drop?.().catch((err: Error) => void ctx.io.warn(`${err.message}: remove it by hand, then run the same command`));
      if (gone) ctx.debugSink?.(`[kv] rehearsal: removed ${gone.join(', ') || 'nothing'}`);
    });
  };
}

/** Members whose driver finds their clone by looking at them (MemberDriver.cloning): what its clonable() says then. */
export async function lookForClone(driver: MemberDriver | undefined, members: readonly MemberSpec[], how: CloneLook = {}): Promise<void> {
  await driver?.cloning?.look(members, how);
}

/**
 * Inside the clone: the parent starts this run while it still copies the members' files (the namespaces and
 * opsctl's own start overlap the copy: kv/rehearsal/clone.ts), so nothing of the copy is read before the parent
 * says it is whole (COPY_READY on standard input, a pipe from the parent). An input that ends first: the copy
 * failed, or the parent is gone. (A terminal's input: a run by hand, which cloneRun refuses, is not kept waiting.)
 * Then, on the same input, what the parent read of the members' data for its plan (clone.ts JUDGED): `judged`.
 */
export async function copyWhole(ctx: Context): Promise<{ judged: Promise<JudgedReads | undefined> }> {
  if (ctx.io.isStdinTTY) return { judged: Promise.resolve(undefined) };
  const stdin = ctx.io.stdin;
  let seen = '';
  let whole = false;
  let copied!: () => void;
  let failed!: (err: Error) => void;
  let told!: (reads: JudgedReads | undefined) => void;
  const copy = new Promise<void>((resolve, reject) => ((copied = resolve), (failed = reject)));
  // (then the parent's own reads of the same data for its plan, JUDGED: undefined where its input ends without them)
  const judged = new Promise<JudgedReads | undefined>((resolve) => (told = resolve));
  const ended = () => {
    if (!whole)
      failed(
        new OpsError("--rehearsal-clone: the rehearsal's copy was not made whole (its input ended first)", 1, {
          code: 'rehearsal',
          hint: 'run opsctl kv upgrade --rehearse, not --rehearsal-clone by hand',
        }),
      );
    told(undefined);
  };
  stdin.on('data', (chunk: Buffer | string) => {
    // (the parent's words are two short lines: more is not read)
    if (seen.length > 16 * 1024 * 1024) return void (stdin.destroy(), ended());
    seen += String(chunk);
    if (!whole && seen.includes(COPY_READY)) {
      whole = true;
      copied();
    }
    const at = whole ? seen.indexOf(JUDGED) : -1;
    const end = at < 0 ? -1 : seen.indexOf('\n', at);
    if (end >= 0) told(parseJudged(seen.slice(at + JUDGED.length, end)));
  });
  stdin.once('end', ended);
  stdin.once('error', ended);
  await copy;
  return { judged };
}

/** Inside the clone: its members started as the driver starts them, then its load; stop() says what the load saw. */
export async function cloneRun(ctx: Context, cluster: ClusterSpec, given: MemberDriver | undefined, session: KvSession) {
  // members that their driver found by looking at them are the clone's own (the record the parent left): their driver in the clone
  const driver = given?.cloning ? await given.cloning.inClone(ctx.paths.data) : given;
  const c = given?.cloning ? { paths: [] } : driver?.clonable?.();
  if (!driver || !c || 'why' in c)
    throw new UsageError('--rehearsal-clone: this is the run opsctl starts inside a clone (kv upgrade --rehearse), on a cluster whose members it can clone', {
      field: '--rehearsal-clone',
      hint: 'run opsctl kv upgrade --rehearse instead',
    });
  const { startClone, startLoad } = await import('../../../kv/rehearsal/load.js');
  const upMs = await startClone(driver, cluster.members, session, 120_000, ctx.now);
  ctx.debugSink?.(`[kv] the clone's members healthy with one leader after ${upMs} ms`);
  const load = startLoad(cluster.members, session, { writeEveryMs: 100, probeEveryMs: 200 });
  // each hop's cluster version raised at once by a leader hand-off, where etcd takes one: counted for the verdict
  let moved = 0;
  // (the wait for the cluster version ends with it: the final health pass or the next hop never meets a leader changing)
  const atClusterVersionWait = (to: string): Promise<void> =>
    import('../../../kv/rehearsal/hand-off.js')
      .then(({ handOffLeader }) => handOffLeader(cluster.members, session, to))
      .then((h) => {
        if (h.moved) moved++;
        ctx.debugSink?.(`[kv] the clone at the wait for cluster version ${to}: ${h.moved ? h.detail : `no hand-off (${h.why}): etcd's own check raises it`}`);
      })
      .catch((err: Error) => ctx.debugSink?.(`[kv] the clone's hand-off at cluster version ${to}: ${err.message}`));
  let seen: Promise<Awaited<ReturnType<typeof load.stop>> & { upMs: number; handOffs: number }> | undefined;
  return {
    driver,
    atClusterVersionWait,
    stop: () => (seen ??= load.stop().then((r) => ({ ...r, upMs, handOffs: moved }))),
  };
}
