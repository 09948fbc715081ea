import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OpsError } from '../../core/errors.js';
import type { ClusterSpec, MemberSpec } from '../cluster/cluster-file.js';
import { KvClient } from '../cluster/client.js';
import { capabilitiesOf, placeOf, type MemberDriver, type MemberTarget } from '../drivers/driver.js';
import { type StepReporter, type Timeouts } from '../upgrade/options.js';
import { journalPath } from '../journal/journal.js';
import { readJournal } from '../journal/read.js';
import { observeCluster } from '../cluster/observe.js';
import type { KvSession } from '../cluster/session.js';
import { minor } from '../cluster/parse.js';
import type { RestoreRequest } from '../drivers/driver.js';
import { restoreTool } from '../drivers/restore-data.js';
import type { WithRestorePoint } from '../upgrade/restore-point.js';
import { parseSimSnapshot, snapshotStatus, type SnapshotStatus } from '../snapshot/status.js';
import { stopsBegun, type RestoreRecord } from '../journal/restore-record.js';
import { doneWords, recordedRestore } from './restore-resume.js';

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
  /** Restore the snapshot again although the last restore recorded here restored it (every write since is lost). */
  again?: boolean;
  /** The debug sink (the crash-point lines). */
  debug?: (line: string) => void;
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
  /** The members in their stop order (the leader first). */
  order: string[];
  /** The half-done restore of this snapshot this plan finishes (its run id, token, version and binaries). */
  resume?: RestoreRecord;
  /** The finished restore of this snapshot recorded here: nothing to do (unless --again). */
  done?: RestoreRecord;
  /** A restore that never stopped a member, given up for this one (its staged data is dropped). */
  supersedes?: RestoreRecord;
  /** The restore journal's last write as this plan read it (none: no journal): the run refuses when it changed meanwhile. */
  recordAt?: string;
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
  /** The run id of the half-done restore this run finished (the identical command after a kill). */
  resumed?: string;
  /** Said by a resume whose restored members came up before it: the writes since, not checked against the snapshot. */
  note?: string;
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
  // What a restore recorded for this cluster: the one this command finishes, or one already done.
  const rec = recordedRestore(o, snap, notes);
  const { resume } = rec;
  if (rec.done) {
    const d = rec.done;
    const members = d.members.map((m) => ({ ...m, check: '' }));
    return { snapshot: snap, restorePoint, version: d.to, token: d.token, run: d.id, members, order: [], expectedKeys: snap.liveKeys, notes, ...rec };
  }
  if (resume) {
    const names = (xs: Array<{ name: string }>) =>
      xs
        .map((m) => m.name)
        .sort()
        .join(', ');
    if (names(resume.members) !== names(o.cluster.members))
      throw refuse(
        `the half-done restore ${resume.id} restores members ${names(resume.members)}; this cluster is ${names(o.cluster.members)}`,
        'run it with the cluster flags that began it',
      );
  }

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
  if (snap.kind !== 'etcd') {
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
  } else if (!capabilitiesOf(driver).etcdData) {
    throw refuse(
      `${o.snapshot} is a real etcd snapshot: the sandbox's ${capabilitiesOf(driver).what} members cannot restore it`,
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
    resume?.to ??
    o.toVersion ??
    j?.source ??
    minor(obs.members.find((m) => m.serverVersion)?.serverVersion) ??
    (firstMember && driver.current(firstMember)?.version);
  if (!version) throw refuse('the version to start the members on is unknown', 'pass --to-version 3.2 (or --target-bin DIR)', 'no_version');
  if (o.targetBin && !existsSync(join(o.targetBin, 'etcd')) && (o.cluster.sandbox || placeOf(driver).startsHere)) {
    throw refuse(`--target-bin ${o.targetBin} has no etcd binary`, 'give the directory of an extracted etcd release (it holds etcd and etcdctl)', 'no_binary');
  }
  const targetOf = (m: MemberSpec): MemberTarget => {
    const recorded = resume?.members.find((x) => x.name === m.name)?.target;
    if (recorded) return recorded;
    if (o.targetBin) return { version, binDir: o.targetBin };
    const prev = j?.previous?.[m.name];
    if (prev?.version === version && prev.binDir) return { version, binDir: prev.binDir };
    const cur = driver.current(m);
    return { version, binDir: cur?.version === version ? cur.binDir : undefined };
  };

  // Peer URLs: the cluster file's, else the cluster's member list.
  let list: Awaited<ReturnType<KvClient['members']>> | undefined;
  for (const m of o.cluster.members) {
    // (a resume: the peer URLs the restore began with; its members may all be down)
    m.peerUrl ??= resume?.members.find((x) => x.name === m.name)?.peerUrl;
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
  const run = resume?.id ?? `${stamp}-${randomBytes(2).toString('hex')}`;
  const token = resume?.token ?? `opsctl-restore-${run}`;
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
  const problems: MemberProblem[] = [];
  for (const m of o.cluster.members) {
    const target = targetOf(m);
    if (driver.etcdFromDir && !target.binDir) {
      problems.push({ member: m.name, text: `no etcd ${version} binary is known (the journal records none): pass --target-bin DIR` });
      continue;
    }
    if (snap.kind === 'etcd' && target.binDir && (o.cluster.sandbox || placeOf(driver).startsHere)) {
      const tool = restoreTool(target);
      if (!existsSync(tool.path)) {
        problems.push({
          member: m.name,
          text: `${tool.path} does not exist${tool.name === 'etcdutl' ? ` (etcd ${version} restores with etcdutl: 3.6's etcdctl has no snapshot restore)` : ''}: pass --target-bin DIR of a ${version} release`,
        });
        continue;
      }
    }
    const req = request(o.snapshot, m, initialCluster, token, run, target);
    const check = await checkRestore(m, req).catch((err: Error) => {
      // (a driver's words may name the member already: said once, by the group below)
      problems.push({ member: m.name, text: err.message.startsWith(`member ${m.name}: `) ? err.message.slice(`member ${m.name}: `.length) : err.message });
      return '';
    });
    members.push({ name: m.name, endpoint: m.endpoint, peerUrl: m.peerUrl!, target, check });
  }
  if (problems.length) {
    const lines = byMember(problems, o.cluster.members.length);
    throw refuse(
      lines.length === 1 ? lines[0]! : `\n  - ${lines.join('\n  - ')}`,
      `fix what each line names for its members (the driver's templates, the data dir, the host, the binaries), then run kv restore again; ${resume && stopsBegun(resume) ? `the half-done restore ${resume.id} was left as it is` : 'nothing was stopped'}`,
      'restore_check',
    );
  }
  const expectedKeys = snap.liveKeys;
  const leaderId = obs.members.find((m) => m.healthy && m.leaderId)?.leaderId;
  const leader = obs.members.find((m) => m.id === leaderId)?.name;
  // One at a time, the leader first: each stopping leader hands over to a running member at once
  // (stopped together, real etcd members each wait out a leadership transfer: seconds). A resume keeps its order.
  const order =
    resume?.steps.filter((s) => s.kind === 'stop').map((s) => s.member!) ??
    o.cluster.members.map((m) => m.name).sort((a, b) => Number(b === leader) - Number(a === leader));
  return { snapshot: snap, restorePoint, clusterRevision, version, token, run, members, leader, order, expectedKeys, notes, ...rec };
}

/** A problem a member's restore would meet, in words that do not name the member (byMember does). */
interface MemberProblem {
  member: string;
  text: string;
}

/**
 * One line per distinct problem, naming the members it applies to, in the order first met: the same
 * words for three members (a driver without a restore template) are one line, not three unnamed ones.
 */
export function byMember(problems: readonly MemberProblem[], clusterSize: number): string[] {
  const groups = new Map<string, string[]>();
  for (const p of problems) groups.set(p.text, [...(groups.get(p.text) ?? []), p.member]);
  return [...groups].map(([text, names]) =>
    names.length === 1
      ? `member ${names[0]}: ${text}`
      : `${names.length === clusterSize && clusterSize > 1 ? `every member (${names.join(', ')})` : `members ${names.join(', ')}`}: ${text}`,
  );
}

export function request(snapshot: string, m: MemberSpec, initialCluster: string, token: string, run: string, target: MemberTarget): RestoreRequest {
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
  if (p.done) return `Restore from ${doneWords(p.done)}`;
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

/** Gives up a plan that was not carried out (a "no" at the prompt): the staged data goes; a half-done restore stays as it is (the identical command finishes it). */
export async function abandonRestore(o: RestoreOptions, p: RestorePlan): Promise<void> {
  if (p.resume) return;
  for (const m of o.cluster.members) await o.driver?.abandonRestore?.(m, request(o.snapshot, m, '', p.token, p.run, { version: p.version }));
}
