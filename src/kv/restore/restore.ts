import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InterruptedError, OpsError } from '../../core/errors.js';
import type { ClusterSpec, MemberSpec } from '../cluster/cluster-file.js';
import { KvClient } from '../cluster/client.js';
import type { MemberDriver, MemberTarget } from '../drivers/driver.js';
import { acquireLock } from '../upgrade/lock.js';
import { type StepReporter, type Timeouts } from '../upgrade/options.js';
import { journalPath } from '../journal/journal.js';
import { readJournal } from '../journal/read.js';
import { observeCluster } from '../cluster/observe.js';
import type { KvSession } from '../cluster/session.js';
import { minor } from '../cluster/parse.js';
import type { RestoreRequest } from '../drivers/driver.js';
import { restoreTool } from '../drivers/restore-data.js';
import { countKeys } from '../cluster/keys.js';
import type { WithRestorePoint } from '../upgrade/restore-point.js';
import { parseSimSnapshot, snapshotStatus, type SnapshotStatus } from '../snapshot/status.js';
import { waitFor, WaitFatal } from '../cluster/wait.js';

export interface RestoreOptions {
  cluster: ClusterSpec;
  /** The cluster's connection (TLS, auth, pool). */
  session: KvSession;
  driver?: MemberDriver;
  /** opsctl's data dir (journals). */
  dataDir: string;
  snapshot: string;
  /** The journal whose restore point and binaries the restore reads (default: the cluster's; `--from-hop`: that hop's). */
  journalFile?: string;
  /** The minor version to start every member on (default: the recorded upgrade's source, else what runs now). */
  toVersion?: string;
  /** Real etcd: the directory of the release to start (and whose etcdctl restores the data, local driver). */
  targetBin?: string;
  timeouts: Timeouts;
  now: () => number;
  reporter: StepReporter;
  lockStaleMs?: number;
  /** Ctrl-C: honoured until the first stop (nothing changed then); after it the restore runs to its end. */
  signal?: AbortSignal;
}

export interface RestorePlan {
  snapshot: SnapshotStatus;
  /** Whether the snapshot is the recorded upgrade's restore point (same SHA-256). */
  restorePoint: boolean;
  /** The cluster's highest revision now, when a member answered. */
  clusterRevision?: string;
  version: string;
  token: string;
  run: string;
  members: Array<{ name: string; endpoint: string; peerUrl: string; target: MemberTarget; check: string }>;
  /** The leader when planned (stopped first: it hands leadership over at once instead of waiting for peers that are stopping too). */
  leader?: string;
  /** Live keys the snapshot holds (read from the file). */
  expectedKeys: number;
  notes: string[];
}

export interface RestoreReport {
  status: 'restored';
  snapshot: string;
  version: string;
  token: string;
  members: Array<{ name: string; detail: string }>;
  /** Measured phases: building the restored data, stopping every member, until all are healthy and agree on the cluster version, the check. */
  phasesMs: { prepare: number; stop: number; healthy: number; verify: number };
  healthyMs: number;
  totalMs: number;
  revision: string;
  keys: number;
  expectedKeys?: number;
  /** The cluster version every member reports once the restore is done (as etcd says it: 3.4.0). */
  clusterVersion: string;
}

const refuse = (message: string, hint: string, code = 'restore_refused') => new OpsError(`kv restore refused before any change: ${message}`, 1, { code, hint });

/**
 * Everything that can be checked before a member is stopped: the snapshot (hash trailer, readable,
 * its revision not beyond the cluster's, its member names this cluster's), the driver can restore,
 * each member's peer URL, data dir and host, the binaries of the target version. Then the restored
 * data is built beside the live data where the driver can (local). Nothing is stopped here.
 */
export async function planRestore(o: RestoreOptions): Promise<RestorePlan> {
  const notes: string[] = [];
  const snap = await snapshotStatus(o.snapshot);
  if (!o.driver?.restoreData || !o.driver.checkRestore) {
    throw new OpsError('kv restore: no way to stop, restore and start the members', 2, {
      code: 'no_driver',
      hint: 'use the sandbox, or a cluster file whose command driver has restore (and restoreCheck) templates, or --restore-cmd with --stop-cmd/--start-cmd/--running-cmd; nothing was changed',
    });
  }
  const driver = o.driver;
  const checkRestore = o.driver.checkRestore.bind(o.driver);
  let j: WithRestorePoint | undefined;
  try {
    j = readJournal(o.journalFile ?? journalPath(o.dataDir, o.cluster.key));
  } catch {
    notes.push('the upgrade journal of this cluster cannot be read: the snapshot is not compared with its restore point');
  }
  const rp = j?.restorePoint;
  const restorePoint = Boolean(rp && rp.sha256 === snap.sha256);

  // The cluster as it is (members may be down: that may be why it is restored).
  const obs = await observeCluster(o.cluster.members, { session: o.session, timeoutMs: o.timeouts.requestMs });
  const revs = obs.members.filter((m) => m.revision !== undefined).map((m) => BigInt(m.revision!));
  const clusterRevision = revs.length ? revs.reduce((a, b) => (a > b ? a : b)).toString() : undefined;
  if (clusterRevision === undefined) notes.push("no member answers: the snapshot's revision could not be compared with the cluster's");
  if (clusterRevision !== undefined && BigInt(snap.revision) > BigInt(clusterRevision)) {
    throw refuse(
      `the snapshot ${o.snapshot} holds revision ${snap.revision}, beyond this cluster's revision ${clusterRevision}: it was not taken from this cluster`,
      `restore a snapshot of this cluster (the last upgrade's restore point is ${rp ? `${rp.file}, revision ${rp.revision}` : 'not recorded'}), or check --cluster/--endpoints`,
      'snapshot_other_cluster',
    );
  }
  if (snap.kind === 'simulated') {
    const from = parseSimSnapshot(readFileSync(o.snapshot)).member;
    if (!o.cluster.members.some((m) => m.name === from)) {
      throw refuse(
        `the snapshot ${o.snapshot} was taken from member ${from}, which this cluster does not have (${o.cluster.members.map((m) => m.name).join(', ')})`,
        'restore a snapshot of this cluster, or check --cluster/--endpoints',
        'snapshot_other_cluster',
      );
    }
    if (driver.etcdFromDir)
      throw refuse(`${o.snapshot} is a simulated member's snapshot: real etcd members cannot restore it`, 'restore a snapshot taken from these etcd members');
  } else if (driver.builtIn) {
    throw refuse(
      `${o.snapshot} is a real etcd snapshot: the sandbox's ${driver.builtIn.what} members cannot restore it`,
      'restore a snapshot taken from the sandbox (kv status names the restore point)',
    );
  }
  if (!restorePoint) {
    notes.push(
      rp
        ? `this is not the last upgrade's restore point (${rp.file}, revision ${rp.revision})`
        : 'no upgrade restore point is recorded for this cluster: the snapshot is checked by its hash and revision only',
    );
  }

  // The version every member starts on, and its binaries.
  // (A cluster given as --endpoints ',' has no member: no driver's version then, and the refusal below.)
  const firstMember = o.cluster.members[0];
  const version =
    o.toVersion ?? j?.source ?? minor(obs.members.find((m) => m.serverVersion)?.serverVersion) ?? (firstMember && driver.current(firstMember)?.version);
  if (!version) throw refuse('the version to start the members on is unknown', 'pass --to-version 3.2 (or --target-bin DIR)', 'no_version');
  if (o.targetBin && !existsSync(join(o.targetBin, 'etcd')) && (o.cluster.sandbox || driver.type === 'local')) {
    throw refuse(`--target-bin ${o.targetBin} has no etcd binary`, 'give the directory of an extracted etcd release (it holds etcd and etcdctl)', 'no_binary');
  }
  const targetOf = (m: MemberSpec): MemberTarget => {
    if (o.targetBin) return { version, binDir: o.targetBin };
    const prev = j?.previous?.[m.name];
    if (prev?.version === version && prev.binDir) return { version, binDir: prev.binDir };
    const cur = driver.current(m);
    return { version, binDir: cur?.version === version ? cur.binDir : undefined };
  };

  // Peer URLs: the cluster file's, else the cluster's member list.
  let list: Awaited<ReturnType<KvClient['members']>> | undefined;
  for (const m of o.cluster.members) {
    if (m.peerUrl) continue;
    list ??= await firstMemberList(o.cluster.members, o.session, o.timeouts.requestMs);
    const hit = list?.find((x) => x.name === m.name || x.clientUrls.some((u) => u.replace(/\/+$/, '') === m.endpoint));
    if (!hit?.peerUrls[0]) {
      throw refuse(
        `the peer URL of member ${m.name} is unknown (no member answered with the member list)`,
        `add peerUrl: to member ${m.name} in the cluster file`,
        'no_peer_url',
      );
    }
    m.peerUrl = hit.peerUrls[0];
  }
  const stamp = new Date(o.now()).toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
  const run = `${stamp}-${randomBytes(2).toString('hex')}`;
  const token = `opsctl-restore-${run}`;
  if (snap.kind === 'etcd') {
    // The snapshot's own member list (its "members" bucket): another cluster's members differ in
    // name or peer URL (a restore keeps both, only the ids change).
    const mine = new Set(o.cluster.members.map((m) => `${m.name}=${m.peerUrl!.replace(/\/+$/, '')}`));
    const theirs = snap.members.flatMap((m) => m.peerURLs.map((u) => `${m.name}=${u.replace(/\/+$/, '')}`));
    if (theirs.length && !theirs.some((x) => mine.has(x))) {
      throw refuse(
        `the snapshot ${o.snapshot} was taken from a cluster of ${theirs.join(', ')}; this cluster is ${[...mine].join(', ')}`,
        `restore a snapshot of this cluster (the last upgrade's restore point is ${rp ? rp.file : 'not recorded'}), or check --cluster/--endpoints`,
        'snapshot_other_cluster',
      );
    }
  }
  const initialCluster = o.cluster.members.map((m) => `${m.name}=${m.peerUrl}`).join(',');
  const members: RestorePlan['members'] = [];
  const problems: string[] = [];
  for (const m of o.cluster.members) {
    const target = targetOf(m);
    if (driver.etcdFromDir && !target.binDir) {
      problems.push(`member ${m.name}: no etcd ${version} binary is known (the journal records none): pass --target-bin DIR`);
      continue;
    }
    if (snap.kind === 'etcd' && target.binDir && (o.cluster.sandbox || driver.type === 'local')) {
      const tool = restoreTool(target);
      if (!existsSync(tool.path)) {
        problems.push(
          `member ${m.name}: ${tool.path} does not exist${tool.name === 'etcdutl' ? ` (etcd ${version} restores with etcdutl: 3.6's etcdctl has no snapshot restore)` : ''}: pass --target-bin DIR of a ${version} release`,
        );
        continue;
      }
    }
    const req = request(o.snapshot, m, initialCluster, token, run, target);
    const check = await checkRestore(m, req).catch((err: Error) => {
      problems.push(`${err.message}`);
      return '';
    });
    members.push({ name: m.name, endpoint: m.endpoint, peerUrl: m.peerUrl!, target, check });
  }
  if (problems.length) {
    throw refuse(
      `\n  - ${problems.join('\n  - ')}`,
      'fix each member named (restore the data dir, reach the host, give the binaries), then run kv restore again; nothing was stopped',
      'restore_check',
    );
  }
  const expectedKeys = snap.liveKeys;
  const leaderId = obs.members.find((m) => m.healthy && m.leaderId)?.leaderId;
  const leader = obs.members.find((m) => m.id === leaderId)?.name;
  return { snapshot: snap, restorePoint, clusterRevision, version, token, run, members, leader, expectedKeys, notes };
}

function request(snapshot: string, m: MemberSpec, initialCluster: string, token: string, run: string, target: MemberTarget): RestoreRequest {
  return { snapshot, name: m.name, peerUrl: m.peerUrl!, initialCluster, token, run, target };
}

async function firstMemberList(members: MemberSpec[], session: KvSession, timeoutMs: number) {
  for (const m of members) {
    try {
      return await new KvClient(m.endpoint, { session, timeoutMs }).members();
    } catch {
      // the next one
    }
  }
  return undefined;
}

/** The human plan (also the --dry-run output). */
export function describeRestore(p: RestorePlan): string {
  const s = p.snapshot;
  const lines = [
    `Restore from ${s.file}: revision ${s.revision}, ${s.liveKeys} keys, ${s.totalSize} bytes, sha256 ${s.sha256.slice(0, 16)}…${p.restorePoint ? " (the last upgrade's restore point)" : ''}`,
    `The cluster is at revision ${p.clusterRevision ?? 'unknown (no member answers)'}: every write after the snapshot's revision ${s.revision} is lost.`,
    `Every member is stopped, its data dir kept as DIR.before-restore-${p.run}, rebuilt from the snapshot (new cluster token ${p.token}) and started on ${p.version}:`,
    ...p.members.map(
      (m, i) =>
        `  ${i + 1}. ${m.name} (${m.peerUrl}) on ${m.target.binDir ? `${m.target.binDir}/etcd` : m.target.version}${m.check ? `; checked: ${m.check}` : ''}`,
    ),
    ...p.notes.map((n) => `Note: ${n}`),
  ];
  return lines.join('\n');
}

/** Gives up a plan that was not carried out (a "no" at the prompt): the staged data goes. */
export async function abandonRestore(o: RestoreOptions, p: RestorePlan): Promise<void> {
  for (const m of o.cluster.members) await o.driver?.abandonRestore?.(m, request(o.snapshot, m, '', p.token, p.run, { version: p.version }));
}

/**
 * Carries the plan out under the cluster's journal lock: builds the restored data beside the live
 * data (local), stops every member, swaps each member's data (the old dir kept), starts every member
 * on the target, waits (with a deadline) until every member is healthy on it with one leader, and
 * verifies the revision and key count against the snapshot.
 */
export async function runRestore(o: RestoreOptions, p: RestorePlan): Promise<RestoreReport> {
  const t0 = o.now();
  const driver = o.driver!;
  const t = o.timeouts;
  const unlock = await acquireLock(journalPath(o.dataDir, o.cluster.key), o);
  try {
    const initialCluster = p.members.map((m) => `${m.name}=${m.peerUrl}`).join(',');
    const req = (m: MemberSpec) => request(o.snapshot, m, initialCluster, p.token, p.run, p.members.find((x) => x.name === m.name)!.target);
    const p0 = o.now();
    if (driver.prepareRestore) {
      const step = o.reporter.begin("restore: building the restored data beside each member's data");
      try {
        for (const m of o.cluster.members) await driver.prepareRestore(m, req(m));
        step.done(`restore: restored data built for ${o.cluster.members.length} members`);
      } catch (err) {
        step.fail(`restore: ${(err as Error).message}`);
        await abandonRestore(o, p).catch(() => undefined);
        throw refuse((err as Error).message, 'nothing was stopped: check the snapshot and the etcdctl of the target release');
      }
    }
    const prepareMs = o.now() - p0;
    if (o.signal?.aborted) {
      await abandonRestore(o, p).catch(() => undefined);
      throw Object.assign(new InterruptedError('kv restore interrupted before any member was stopped: nothing changed'), {
        hint: 'run the same command again to restore',
      });
    }
    const s0 = o.now();
    const out: RestoreReport['members'] = [];
    const failed = (what: string, err: unknown) =>
      new OpsError(`kv restore failed ${what}: ${(err as Error).message}`, 3, {
        code: 'restore_failed',
        hint: `every member is stopped; the old data dirs are kept as DIR.before-restore-${p.run} (rename one back to DIR and start the member to return to the old data), or fix the cause and run kv restore again`,
      });
    const stop = o.reporter.begin(`restore: stopping ${o.cluster.members.length} members`);
    try {
      // One at a time, the leader first: each stopping leader hands over to a running member at once
      // (stopped together, real etcd members each wait out a leadership transfer: seconds).
      const order = [...o.cluster.members].sort((a, b) => Number(b.name === p.leader) - Number(a.name === p.leader));
      for (const m of order) await stopAndWait(o, driver, m);
    } catch (err) {
      stop.fail(`restore: ${(err as Error).message}`);
      throw new OpsError(`kv restore: stopping the members failed: ${(err as Error).message}`, 3, {
        code: 'restore_failed',
        hint: 'no data was changed: start the stopped members again (opsctl kv rollback or your service manager), fix the cause, then run kv restore again',
      });
    }
    const stopMs = o.now() - s0;
    stop.done(`restore: every member stopped (${stopMs} ms)`);
    for (const m of o.cluster.members) {
      try {
        out.push({ name: m.name, detail: await driver.restoreData!(m, req(m)) });
      } catch (err) {
        throw failed(`on ${m.name}`, err);
      }
    }
    const start = o.reporter.begin(`restore: starting every member on ${p.version}`);
    try {
      for (const m of o.cluster.members) await driver.start(m, req(m).target);
    } catch (err) {
      start.fail(`restore: ${(err as Error).message}`);
      throw failed('starting the members', err);
    }
    const h0 = o.now();
    const gone = new Map<string, number>();
    const seen = await waitFor(
      async () => {
        // A member whose process is gone on three polls in a row will not become healthy: say so now.
        for (const m of o.cluster.members) {
          const n = (await driver.isRunning(m)) ? 0 : (gone.get(m.name) ?? 0) + 1;
          gone.set(m.name, n);
          if (n >= 3) throw new WaitFatal(`${m.name}'s process exited after its start on the restored data (see its log)`);
        }
        const all = await observeCluster(o.cluster.members, { session: o.session, timeoutMs: t.requestMs, alarms: false });
        const wrong = all.members.find((x) => x.serverVersion && minor(x.serverVersion) !== p.version);
        if (wrong) throw new WaitFatal(`${wrong.name} runs ${wrong.serverVersion}, not ${p.version}: check what the start command starts`);
        const sick = all.members.filter((x) => !x.healthy);
        if (sick.length) {
          start.update(`restore: waiting for ${sick.map((x) => x.name).join(', ')} to be healthy`);
          return undefined;
        }
        const leaders = new Set(all.members.map((x) => x.leaderId));
        if (leaders.size !== 1 || leaders.has(undefined) || leaders.has('0')) return undefined;
        // The leader decides the cluster version a few seconds after it is elected; until every member
        // reports the same one, the next kv upgrade would refuse ("not decided"): the restore is not done.
        const versions = new Set(all.members.map((x) => x.clusterVersion));
        if (versions.size !== 1 || versions.has(undefined)) {
          start.update('restore: waiting for the members to agree on the cluster version');
          return undefined;
        }
        return all;
      },
      { timeoutMs: t.healthyMs, pollMs: t.pollMs, now: o.now, what: `every member healthy on ${p.version} with one leader and one cluster version` },
    ).catch((err: Error) => {
      start.fail(`restore: ${err.message}`);
      throw failed('waiting for health', err);
    });
    const healthyMs = o.now() - h0;
    const clusterVersion = seen.members[0]?.clusterVersion ?? '';
    start.done(`restore: ${seen.members.length} members healthy on ${p.version}, cluster version ${clusterVersion} (${healthyMs} ms)`);
    const v0 = o.now();
    const [first] = seen.members;
    if (!first) throw new Error('restore: no member to verify'); // never: the wait above saw one leader among them
    const leader = seen.members.find((x) => x.id === first.leaderId) ?? first;
    const revision = seen.members
      .map((x) => BigInt(x.revision ?? '0'))
      .reduce((a, b) => (a > b ? a : b))
      .toString();
    const keys = await countKeys(new KvClient(leader.endpoint, { session: o.session, timeoutMs: t.requestMs }));
    const verify = o.reporter.begin('restore: verifying keys and revision against the snapshot');
    const problems: string[] = [];
    if (revision !== p.snapshot.revision) problems.push(`the cluster is at revision ${revision}, the snapshot at ${p.snapshot.revision}`);
    if (keys !== p.expectedKeys) problems.push(`the cluster holds ${keys} keys, the snapshot ${p.expectedKeys}`);
    if (problems.length) {
      verify.fail(`restore: ${problems.join('; ')}`);
      throw new OpsError(`kv restore: the restored cluster does not match the snapshot: ${problems.join('; ')}`, 3, {
        code: 'restore_mismatch',
        hint: 'a client may have written meanwhile; check with opsctl kv status and kv get; the old data dirs are kept',
      });
    }
    verify.done(`restore: revision ${revision} = the snapshot's, ${keys} keys = the snapshot's`);
    const phasesMs = { prepare: prepareMs, stop: stopMs, healthy: healthyMs, verify: o.now() - v0 };
    return {
      status: 'restored',
      snapshot: o.snapshot,
      version: p.version,
      token: p.token,
      members: out,
      phasesMs,
      healthyMs,
      totalMs: o.now() - t0,
      revision,
      keys,
      expectedKeys: p.expectedKeys,
      clusterVersion,
    };
  } finally {
    await unlock().catch(() => undefined);
  }
}

async function stopAndWait(o: RestoreOptions, driver: MemberDriver, m: MemberSpec): Promise<void> {
  const running = () => driver.isRunning(m);
  if (!(await running())) return;
  await driver.stop(m);
  const gone = async () => ((await running()) ? undefined : true);
  await waitFor(gone, { timeoutMs: o.timeouts.stopMs, pollMs: Math.min(o.timeouts.pollMs, 50), what: `${m.name} process exit` }).catch(async (err) => {
    if (!driver.kill) throw err;
    await driver.kill(m);
    await waitFor(gone, { timeoutMs: 10_000, pollMs: 100, what: `${m.name} process exit after SIGKILL` });
  });
}
