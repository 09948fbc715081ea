/**
 * `kv downgrade --to 3.5` (or `--to 3.6` from 3.7): etcd's downgrade API, as its guides do it
 * (Downgrade etcd from v3.6 to v3.5, from v3.7 to v3.6): the whole cluster on the newer minor and
 * healthy; `downgrade validate 3.5`; `downgrade enable 3.5` (the cluster version drops to 3.5 at once,
 * and the storage version follows); then member by member, followers first and the leader last,
 * stop, start on the 3.5 binary, catch up; finally every member on 3.5, the cluster version 3.5, and
 * the downgrade finished (the leader ends it once every member runs 3.5). The minors it takes a
 * cluster from are the ladder's table's (a row with a downgrade guide). The member-by-member part is the upgrade's executor (runUpgrade with `downgrade`): the
 * same whole-cluster gate before each stop, verified snapshot before the first stop (the restore
 * point), data-dir backup, journal, resume after kill -9 or Ctrl-C, --on-failure halt|rollback.
 */
import { InterruptedError, OpsError } from '../../core/errors.js';
import { KvClient } from '../cluster/client.js';
import { requireDriver, runUpgrade } from '../upgrade/executor.js';
import { UpgradeRefused, type Look, type Reach, type UpgradeOptions, type UpgradeReport, type Waits } from '../upgrade/options.js';
import { hopTrials } from '../trial/hops.js';
import type { TrialFinding } from '../trial/run.js';
import { capabilitiesOf } from '../drivers/driver.js';
import { journalPath } from '../journal/journal.js';
import { readJournal } from '../journal/read.js';
import { isResumable, memberMayBeDown, type Journal } from '../journal/journal.js';
import type { JournalWithRuns } from '../journal/runs.js';
import type { CheckRow } from '../rules/types.js';
import { planSummary, warningLines } from '../rules/summary.js';
import type { SkipTrial, Trying } from '../ladder/record.js';
import { binaryVersion } from '../ladder/facts.js';
import { DOWNGRADE_FROM } from '@opsctl/shared/etcd-ladder.js';
import { observeCluster } from '../cluster/observe.js';
import { asObject, minor, parseJsonSafe, previousMinor, textOf } from '../cluster/parse.js';
import type { ClusterObservation } from '../cluster/types.js';
import { WaitAborted, waitFor } from '../cluster/wait.js';

/** The minors etcd's downgrade API takes a cluster from (3.6 → 3.5, 3.7 → 3.6; the ladder's table); earlier minors have no downgrade. */
export { DOWNGRADE_FROM };

export interface DowngradeOptions extends Omit<UpgradeOptions, 'allowSameVersion' | 'downgrade' | 'targetBin'> {
  /** The directory of the target's binaries (`--target-bin 3.5=DIR` or the release cache). */
  targetBin?: string;
  /** Seconds the target's trial start with a member's settings may take (src/kv/trial). */
  trialTimeoutS?: number;
  /** Members stopped without their trial (`--skip-trial M,… --skip-reason WHY`): said on the plan, kept in the journal. */
  skipTrial?: SkipTrial;
}

export interface DowngradeReport {
  kind: 'downgrade';
  status: UpgradeReport['status'];
  cluster: string;
  from: string;
  to: string;
  resumed: boolean;
  /** What happened before the member-by-member part: validate, enable (or found enabled). */
  enable: string[];
  /** The downgrade's end as seen after the last member: the cluster version and whether the downgrade finished. */
  finished?: string;
  binDir?: string;
  binaryVersion?: string;
  planText: string;
  run: UpgradeReport;
}

/** The downgrade in progress as a 3.6 member reports it in its status (`downgradeInfo`). */
async function downgradeInfo(c: KvClient): Promise<{ enabled: boolean; target?: string } | undefined> {
  const body = asObject(parseJsonSafe(await c.gateway('/maintenance/status', {})));
  if (!('downgradeInfo' in body) && !('downgrade_info' in body)) return undefined;
  const d = asObject(body.downgradeInfo ?? body.downgrade_info);
  return { enabled: d.enabled === true, target: minor(textOf(d.targetVersion ?? d.target_version)) };
}

/** POST /v3/maintenance/downgrade: VALIDATE or ENABLE (etcdctl downgrade validate|enable VERSION). */
async function downgradeCall(c: KvClient, action: 'VALIDATE' | 'ENABLE', to: string): Promise<string> {
  const body = asObject(parseJsonSafe(await c.gateway('/maintenance/downgrade', { action, version: to })));
  return textOf(body.version) ?? '?';
}

const client = (o: Pick<DowngradeOptions, Reach>, endpoint: string) =>
  new KvClient(endpoint, { session: o.session, timeoutMs: o.timeouts.requestMs, debug: o.debug });

/** What refuses a downgrade to `to` before anything changes: the whole cluster, the target, the binary. */
function refusals(to: string, obs: ClusterObservation, { enabled }: { enabled: boolean }): string[] {
  const reasons: string[] = [];
  const seen = obs.members.filter((m) => m.reachable && m.serverVersion);
  for (const m of obs.members) {
    if (!m.reachable) reasons.push(`member ${m.name} (${m.endpoint}) is not reachable: ${m.error ?? 'no answer'}`);
    else if (!m.healthy) reasons.push(`member ${m.name} (${m.endpoint}) is not healthy: ${m.healthDetail}`);
  }
  const from = [...new Set(seen.map((m) => minor(m.serverVersion)!))];
  if (from.length !== 1 || !DOWNGRADE_FROM.includes(from[0]!)) {
    reasons.push(
      `the members run ${seen.map((m) => `${m.name} ${m.serverVersion}`).join(', ')}: kv downgrade takes a cluster whose every member runs ${DOWNGRADE_FROM.join(' or ')} (etcd's downgrade API came with 3.6); to go back further, restore a hop's restore point: opsctl kv restore --from-hop MINOR`,
    );
    return reasons;
  }
  const prev = previousMinor(from[0]!);
  if (to !== prev) {
    reasons.push(
      `--to ${to}: etcd downgrades one minor at a time, from ${from[0]} to ${prev} only; to reach ${to}, downgrade to ${prev} first, or restore a hop's restore point (opsctl kv restore --from-hop ${to})`,
    );
  }
  const cv = [...new Set(seen.map((m) => minor(m.clusterVersion)))];
  if (cv.length !== 1) reasons.push(`members disagree on the cluster version (${cv.join(', ')})`);
  else if (cv[0] !== from[0] && !(enabled && cv[0] === to)) reasons.push(`the cluster version is ${cv[0] ?? 'not decided'}, not ${from[0]}`);
  for (const a of obs.alarms) reasons.push(`alarm ${a.alarm} raised on member ${a.memberId}: disarm it first (etcdctl alarm disarm)`);
  return reasons;
}

/** The binaries of the target: given, cached, or (simulated members) the release they stand for; refused when of another minor. */
async function targetBinaries(
  o: Pick<DowngradeOptions, 'to' | 'targetBin' | 'driver' | 'exec'>,
): Promise<{ dir?: string; version?: string; reasons: string[] }> {
  const own = capabilitiesOf(o.driver).releases;
  if (own) return { version: own[o.to], reasons: [] };
  const dir = o.targetBin;
  if (!dir) {
    return o.driver?.etcdFromDir
      ? {
          reasons: [
            `no etcd ${o.to} binaries: give --target-bin ${o.to}=DIR (a directory holding etcd ${o.to}.x), or fetch them: opsctl kv release get ${o.to}.N`,
          ],
        }
      : { reasons: [] }; // the command driver starts {version} by its template
  }
  const v = await binaryVersion(o.exec, dir);
  if ('why' in v) return { dir, reasons: [`--target-bin ${o.to}=${dir}: ${v.why}`] };
  if (minor(v.version) !== o.to) return { dir, version: v.version, reasons: [`--target-bin ${o.to}=${dir}: its etcd is ${v.version}, not ${o.to}.x`] };
  return { dir, version: v.version, reasons: [] };
}

/** The downgrade: refuse or plan, validate, enable, then the executor member by member, then the end confirmed. */
export async function runDowngrade(o: DowngradeOptions): Promise<DowngradeReport> {
  const file = journalPath(o.dataDir, o.cluster.key);
  const recorded = readJournal(file);
  const resuming = isResumable(recorded) && recorded.downgrade === true;
  if (isResumable(recorded) && !resuming) {
    throw new OpsError(`an unfinished upgrade to ${recorded.target} of this cluster is recorded in ${file}`, 1, {
      code: 'journal_conflict',
      hint: `finish it first (opsctl kv upgrade --to ${recorded.target}) or undo it (${o.rollbackCommand}); nothing was changed`,
    });
  }
  requireDriver(o);
  // Already there (the identical command after a run that finished, or one killed after its last write): nothing to do.
  if (!resuming) {
    const there = await alreadyDowngraded(o);
    if (there) return there;
  }
  const bins = await targetBinaries(o);
  const base = { kind: 'downgrade' as const, cluster: o.cluster.key, to: o.to, binDir: bins.dir, binaryVersion: bins.version };
  const exec = (r: UpgradeReport, enable: string[], extra: Partial<DowngradeReport> = {}): DowngradeReport => ({
    ...base,
    status: r.status,
    from: r.source,
    resumed: resuming,
    enable,
    planText: r.planText,
    run: r,
    ...extra,
  });
  // The older binary judges every member's settings before anything stops or is enabled: a flag only the
  // newer version knows (--feature-gates, a renamed experimental flag) stops the older one at start. A
  // member it cannot judge is not stopped either, unless --skip-trial names it.
  const tried = bins.reasons.length ? [] : await downgradeTrials(o, bins, resuming ? recorded : undefined);
  const skip = new Set(o.skipTrial?.members ?? []);
  const refused = tried.filter((t) => !skip.has(t.member) && (t.result === 'problem' || t.result === 'not-checked'));
  if (refused.length)
    throw new UpgradeRefused(
      refused.map((t) => `[trial-start] member ${t.member}: ${t.result === 'not-checked' ? 'not proven: ' : ''}${t.detail}`),
      refused.some((t) => t.result === 'not-checked')
        ? `nothing was changed: give what each line names, then run the command again; to accept the risk for a member by name: --skip-trial ${refused.map((t) => t.member).join(',')} --skip-reason "WHY"`
        : `nothing was changed: change the setting etcd ${o.to} names where it is set, then run the command again`,
      'downgrade',
    );
  const checks = trialRows(tried, o);
  const common = { ...o, allowSameVersion: false, downgrade: true, targetBin: bins.dir, confirm: undefined, checks };
  const trialLines = checks.map((t) => `    ${t.member}: ${t.status}: ${t.detail}`);
  if (resuming) {
    if (bins.reasons.length) throw new UpgradeRefused(bins.reasons, 'nothing was changed: give the binaries of the right version', 'downgrade');
    // The executor resumes at the recorded member (its own pre-flight looks at the whole cluster).
    const r = await runUpgrade({ ...common, dryRun: o.dryRun });
    return r.status === 'done' ? finish(o, exec(r, ['resumed: the downgrade was enabled by the run that started it'])) : exec(r, []);
  }

  const obs = await observeCluster(o.cluster.members, { session: o.session, timeoutMs: o.timeouts.requestMs, debug: o.debug });
  const healthy = obs.members.find((m) => m.reachable && m.healthy);
  const info = healthy ? await downgradeInfo(client(o, healthy.endpoint)).catch(() => undefined) : undefined;
  const enabled = Boolean(info?.enabled && info.target === o.to);
  const reasons = [...refusals(o.to, obs, { enabled }), ...bins.reasons];
  if (info?.enabled && info.target !== o.to)
    reasons.push(`a downgrade to ${info.target ?? '?'} is already enabled: cancel it first (etcdctl downgrade cancel)`);
  if (reasons.length) throw new UpgradeRefused(reasons, 'nothing was changed: fix what is named, then run the command again', 'downgrade');
  const leader = obs.members.find((m) => m.id === healthy!.leaderId) ?? healthy!;
  const c = client(o, leader.endpoint);

  // The plan as the executor will run it (its own whole-cluster pre-flight; nothing changes on a dry run).
  const planned = await runUpgrade({ ...common, dryRun: true });
  const from = planned.source;
  const steps = [
    enabled
      ? `the downgrade to ${o.to} is already enabled (an earlier run): it is not enabled again`
      : `etcdctl downgrade validate ${o.to}, then etcdctl downgrade enable ${o.to} (the cluster version drops to ${o.to} at once; ${from}'s new features are off)`,
    `binaries: ${capabilitiesOf(o.driver).releases ? `${capabilitiesOf(o.driver).what} ${bins.version ?? o.to}` : bins.dir ? `${bins.dir} (etcd ${bins.version ?? '?'})` : "the driver's start template ({version})"}`,
  ];
  const going = planned.plan.filter((m) => m.action !== 'skip');
  const summary = planSummary({
    kind: 'downgrade',
    from,
    to: o.to,
    hops: [o.to],
    members: going.map((m) => m.name),
    leader: planned.plan.find((m) => m.wasLeader)?.name,
    rows: checks,
    warnings: planned.warnings,
    strict: false,
    dryRun: o.dryRun,
  });
  const planText = [
    ...summary,
    `Downgrade ${from} → ${o.to} with etcd ${from}'s downgrade API:`,
    ...steps.map((s, i) => `  ${i + 1}. ${s}`),
    `  the ${o.to} binary tried with each member's settings (scratch data dir, loopback ports), before anything changes:`,
    ...trialLines,
    planned.planText,
    `  finally: every member on ${o.to}, the cluster version ${o.to}, and the downgrade finished (the leader ends it once every member runs ${o.to})`,
    // the warnings the summary's first lines count, ending the text wherever it is shown (dry run, the run, the question)
    ...warningLines(planned.warnings),
  ].join('\n');
  if (o.dryRun) return exec({ ...planned, planText }, [], { planText });
  o.reporter.note(planText);
  if (o.confirm && !(await o.confirm({ target: o.to, planText, warnings: planned.warnings, members: o.cluster.members.length, resuming: false }))) {
    return exec({ ...planned, status: 'declined', planText }, [], { planText });
  }

  const enable: string[] = [];
  if (!enabled) {
    const v = o.reporter.begin(`downgrade: validate ${o.to}`);
    try {
      const at = await downgradeCall(c, 'VALIDATE', o.to);
      v.done(`downgrade: validate ${o.to}: the cluster (version ${at}) can go to ${o.to}`);
      enable.push(`validate ${o.to}: ok (cluster version ${at})`);
    } catch (err) {
      v.fail(`downgrade: validate ${o.to}: ${(err as Error).message}`);
      throw new UpgradeRefused([`etcd refused to validate the downgrade to ${o.to}: ${(err as Error).message}`], 'nothing was changed', 'downgrade');
    }
    const e = o.reporter.begin(`downgrade: enable ${o.to}`);
    try {
      await downgradeCall(c, 'ENABLE', o.to);
    } catch (err) {
      e.fail(`downgrade: enable ${o.to}: ${(err as Error).message}`);
      throw new OpsError(`etcd refused to enable the downgrade to ${o.to}: ${(err as Error).message}`, 1, {
        code: 'downgrade_refused',
        hint: 'no member was stopped; check the cluster (opsctl kv status) and run the command again',
      });
    }
    e.done(`downgrade: enabled ${o.to}`);
    enable.push(`enable ${o.to}: ok`);
  } else enable.push(`enable ${o.to}: already enabled`);
  // Measured, not guessed: every member reports the lowered cluster version before the first stop.
  const w = o.reporter.begin(`downgrade: waiting for every member to report cluster version ${o.to}`);
  const t0 = o.now();
  await waitFor(
    async () => {
      const vs = await Promise.all(
        o.cluster.members.map((m) =>
          client(o, m.endpoint)
            .version()
            .catch(() => undefined),
        ),
      );
      return vs.every((x) => minor(x?.cluster) === o.to) ? true : undefined;
    },
    { timeoutMs: o.timeouts.clusterVersionMs, pollMs: o.timeouts.pollMs, now: o.now, signal: o.signal, what: `cluster version ${o.to} on every member` },
  ).catch((err: Error) => {
    w.fail(`downgrade: ${err.message}`);
    throw new OpsError(`the cluster version did not drop to ${o.to} after the downgrade was enabled: ${err.message}`, 3, {
      code: 'downgrade_halted',
      hint: `no member was stopped; the downgrade stays enabled: run the same command again to go on, or cancel it (etcdctl downgrade cancel)`,
    });
  });
  w.done(`downgrade: every member reports cluster version ${o.to} (${o.now() - t0} ms)`);
  enable.push(`cluster version ${o.to} on every member after ${o.now() - t0} ms`);

  const r = await runUpgrade(common);
  const out = exec(r, enable, { planText });
  return r.status === 'done' ? finish(o, out) : out;
}

/** Each member's trial start on the target's binary (the sandbox here, a host through the trial template); on a resume, the member it stopped by its record. */
async function downgradeTrials(o: Pick<DowngradeOptions, Trying | 'to'>, bins: { dir?: string; version?: string }, resumed?: Journal): Promise<TrialFinding[]> {
  const hop = `→ ${o.to} (downgrade)`;
  const own = capabilitiesOf(o.driver).releases;
  const release = own ? own[o.to] : bins.version;
  const down = resumed ? memberMayBeDown(resumed) : undefined;
  const stopped = down ? { member: down, hop, recorded: (resumed as JournalWithRuns).checks ?? [] } : undefined;
  const found = await hopTrials(
    { driver: o.driver, members: o.cluster.members, timeoutS: o.trialTimeoutS ?? 30, debug: o.debug, ...(stopped ? { stopped } : {}) },
    [{ name: hop, to: o.to, binDir: bins.dir, ...(release ? { release } : {}) }],
  );
  return found.get(hop) ?? [];
}

/** The trials as the journal keeps them (a resume reads the stopped member's from there), skipped members said so. */
function trialRows(tried: TrialFinding[], o: Pick<DowngradeOptions, 'to' | 'skipTrial'>): CheckRow[] {
  const skip = new Set(o.skipTrial?.members ?? []);
  return tried.map((t) => {
    const skipped = skip.has(t.member) && t.result !== 'ok';
    return {
      hop: t.hop,
      rule: 'trial-start',
      check: `the ${o.to} binary starts with each member's own settings`,
      where: 'binary, config file, flags',
      member: t.member,
      status: skipped ? 'warn' : t.result === 'ok' ? 'ok' : t.result === 'problem' ? 'refuse' : 'not checked',
      detail: skipped ? `not proven, skipped by --skip-trial ${t.member} (${o.skipTrial!.reason}): ${t.detail}` : t.detail,
      guide: 'https://etcd.io/docs/v3.6/downgrades/downgrade_3_6/',
    };
  });
}

/** After the last member: every member on the target, the cluster version the target, the downgrade ended. */
async function finish(o: Pick<DowngradeOptions, Waits | 'reporter' | 'to'>, out: DowngradeReport): Promise<DowngradeReport> {
  const step = o.reporter.begin(`downgrade: waiting for the leader to end the downgrade`);
  const peers = await client(o, o.cluster.members[0]!.endpoint)
    .members()
    .catch(() => []);
  const why: string[] = [];
  const done = await waitFor(
    async () => {
      const obs = await observeCluster(o.cluster.members, { session: o.session, timeoutMs: o.timeouts.requestMs, alarms: false });
      const off = obs.members.filter((m) => minor(m.serverVersion) !== o.to || minor(m.clusterVersion) !== o.to);
      if (off.length) {
        why.splice(0, why.length, ...off.map((m) => `${m.name} reports server ${m.serverVersion ?? '?'}, cluster ${m.clusterVersion ?? '?'}`));
        return undefined;
      }
      // etcd 3.5+'s peer handler /downgrade/enabled says whether the downgrade is still on.
      const answers = await Promise.all(
        peers.map((p) =>
          p.peerUrls[0]
            ? client(o, p.peerUrls[0])
                .downgradeEnabled()
                .catch(() => undefined)
            : Promise.resolve(undefined),
        ),
      );
      if (answers.some((a) => a === true)) {
        why.splice(0, why.length, 'a member still reports the downgrade enabled');
        return undefined;
      }
      return answers.some((a) => a === false)
        ? 'the downgrade finished (no member reports it enabled)'
        : 'not confirmed: no peer URL answered /downgrade/enabled';
    },
    { timeoutMs: o.timeouts.clusterVersionMs, pollMs: o.timeouts.pollMs, now: o.now, signal: o.signal, what: `the downgrade to ${o.to} finished` },
  ).catch((err: Error) => {
    // Ctrl-C here ends only the wait: every member was downgraded; the same command confirms the end
    if (err instanceof WaitAborted) {
      step.fail(`downgrade: interrupted while waiting for the leader to end the downgrade`);
      throw Object.assign(new InterruptedError(`kv downgrade interrupted: every member runs ${o.to}; the leader had not yet ended the downgrade`), {
        hint: `run the same command again to wait for it: opsctl kv downgrade --to ${o.to}`,
      });
    }
    step.fail(`downgrade: ${err.message}${why.length ? ` (${why.join('; ')})` : ''}`);
    return undefined;
  });
  if (!done) {
    return {
      ...out,
      status: 'halted',
      finished: `not finished: ${why.join('; ') || 'the cluster did not settle on the target'}`,
    };
  }
  step.done(`downgrade: every member on ${o.to}, cluster version ${o.to}; ${done}`);
  return { ...out, finished: `every member on ${o.to}, cluster version ${o.to}; ${done}` };
}

/** Every member healthy on the target, the cluster version on it and no downgrade left enabled: the report of nothing to do. */
async function alreadyDowngraded(o: Pick<DowngradeOptions, Look | 'to'>): Promise<DowngradeReport | undefined> {
  const obs = await observeCluster(o.cluster.members, { session: o.session, timeoutMs: o.timeouts.requestMs, debug: o.debug });
  const on = (v: string | undefined) => minor(v) === o.to;
  if (!obs.members.every((m) => m.reachable && m.healthy && on(m.serverVersion) && on(m.clusterVersion))) return undefined;
  const healthy = obs.members[0]!;
  const info = await downgradeInfo(client(o, healthy.endpoint)).catch(() => undefined);
  if (info?.enabled) return undefined;
  const planText = `every member runs ${o.to} and the cluster version is ${o.to}: nothing to downgrade`;
  const run: UpgradeReport = {
    status: 'nothing-to-do',
    cluster: o.cluster.key,
    source: o.to,
    target: o.to,
    resumed: false,
    plan: [],
    planText,
    warnings: [],
    steps: [],
    snapshots: [],
    totals: { ms: 0, imposedMs: 0, overheadMs: 0, overheadRatio: null },
  };
  return {
    kind: 'downgrade',
    status: 'nothing-to-do',
    cluster: o.cluster.key,
    from: o.to,
    to: o.to,
    resumed: false,
    enable: [],
    finished: planText,
    planText,
    run,
  };
}
