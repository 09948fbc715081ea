import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { backupsMade, type BackupsDoc } from './backups.js';
import { CLIENT_CHANGES, STAGING_ADVICE } from '../rules/clients.js';
import type { Journal, JournalStep } from '../journal/journal.js';
import type { JournalRun, JournalWithRuns, RunEnd } from '../journal/runs.js';
import type { BackupRun } from '../backups/backups.js';
import type { CheckRow } from '../rules/types.js';
import { restorePointOf } from '../upgrade/restore-point.js';

/** A down window: from the stop until the member answered again, and on what. */
export interface DownWindow {
  from: string;
  to?: string;
  ms?: number;
  /** What it came back on, and who brought it back (the upgrade, --on-failure rollback, kv rollback). */
  back?: { on: string; by: 'upgrade' | '--on-failure rollback' | 'kv rollback' };
}

/** A run that stopped before the end, and the run that took over (if any). */
export interface Interruption {
  /** The hop it stopped in (a ladder report gathers every hop's). */
  hop?: string;
  stoppedAt: string;
  how: RunEnd | 'no end recorded';
  detail?: string;
  resumedAt?: string;
  gapMs?: number;
}

/** A restore point and the exact command that rebuilds the cluster from it. */
export interface RestorePointRow {
  hop: string;
  file: string;
  revision: string;
  keys?: number;
  sha256?: string;
  /** Whether the file is still there. */
  present: boolean;
  command: string;
}

export type { BackupsDoc } from './backups.js';
export { backupsMade, describeFates } from './backups.js';

/** The ladder, hop by hop (when the run was one hop of `kv upgrade --to 3.6`). */
export interface LadderDoc {
  file: string;
  from: string;
  to: string;
  status: string;
  hops: Array<{ name: string; status: string; run?: string; journal?: string; startedAt?: string; updatedAt?: string; report?: UpgradeReportDoc }>;
}

/**
 * The upgrade report: what a journal recorded, arranged for a reader (the plan, each member's down
 * window, the health checks, the snapshots and the cluster version step). Built after the fact from
 * the journal alone, so `kv status --report` gives the same page as `kv upgrade --report`.
 */
export interface UpgradeReportDoc {
  kind: 'opsctl-kv-upgrade-report';
  cluster: string;
  run: string;
  journal: string;
  source: string;
  target: string;
  status: Journal['status'];
  startedAt: string;
  updatedAt: string;
  /** The hop this journal is (`3.2 → 3.3`). */
  hop: string;
  plan: Array<{ order: number; name: string; id: string; endpoint: string; fromVersion: string; action: string; reason: string; wasLeader: boolean }>;
  /** Per member: its steps and its down window (from the stop to healthy again on the target). */
  members: Array<{
    name: string;
    action: string;
    /** The last down window (the one `downs` ends with). */
    down?: DownWindow;
    /** Every down window: an attempt --on-failure rollback undid, then the one that took. */
    downs: DownWindow[];
    steps: Array<Pick<JournalStep, 'kind' | 'status' | 'startedAt' | 'finishedAt' | 'ms' | 'detail' | 'error'>>;
  }>;
  health: Array<{ step: string; member?: string; status: string; at?: string; detail?: string }>;
  snapshots: Array<{ member: string; file: string; revision: string; bytes: number; sha256?: string; at?: string; removed?: string }>;
  clusterVersion: { from: string; to: string; status: string; at?: string; detail?: string };
  halt?: Journal['halt'];
  /** `kv rollback` of this run: each member as it was brought back. */
  rollback?: Journal['rollback'];
  /** The earliest and latest times the journal records (the timeline's scale). */
  span: { from: string; to: string };
  /** Each run of the journal (a resume is a new run) and each stop between them. */
  runs: JournalRun[];
  interruptions: Interruption[];
  /** The hop's rulebook as checked before its first stop ("not checked: why" included). */
  checks: CheckRow[];
  /** What the hop changes for the cluster's clients, and the guides' staging advice (empty for a downgrade or a same-version run). */
  clients: { advice: string; changes: Array<{ version: string; change: string }> };
  restorePoints: RestorePointRow[];
  backups: BackupsDoc;
  ladder?: LadderDoc;
}

/** How the report finds what it does not read from the journal (the files on disk; injected for tests). */
export interface ReportSources {
  hash?: (file: string) => string | undefined;
  /** The backup runs of this cluster on this machine (backups.ts findBackups). */
  backups?: (cluster: string) => BackupRun[];
  exists?: (file: string) => boolean;
}

const HEALTH_KINDS = new Set(['wait-healthy', 'settle', 'final-health']);

/**
 * The SHA-256 a snapshot file carries in its last 32 bytes (etcd appends it; opsctl verified it when
 * the snapshot was taken), or undefined when the file is gone or too short.
 */
export function snapshotTrailerHash(file: string): string | undefined {
  if (!existsSync(file)) return undefined;
  const size = statSync(file).size;
  if (size <= 32) return undefined;
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(32);
    readSync(fd, buf, 0, 32, size - 32);
    return buf.toString('hex');
  } finally {
    closeSync(fd);
  }
}

/** Pure: the report of a journal (`src.hash` reads a snapshot's hash, `src.backups` finds the backups; injected for tests). */
export function buildReport(j: Journal, journalFile: string, src: ReportSources | ((file: string) => string | undefined) = {}): UpgradeReportDoc {
  const sources: ReportSources = typeof src === 'function' ? { hash: src } : src;
  const hash = sources.hash ?? snapshotTrailerHash;
  const x = j as JournalWithRuns;
  const runs = x.runs ?? [];
  const times = [
    j.createdAt,
    j.updatedAt,
    ...j.steps.flatMap((s) => [s.startedAt, s.finishedAt]),
    ...(j.rollback ?? []).map((b) => b.at),
    ...(x.putBack ?? []).map((b) => b.at),
    ...runs.flatMap((r) => [r.startedAt, r.endedAt]),
  ]
    .filter((t): t is string => Boolean(t))
    .sort();
  const members = j.members.map((m) => {
    const steps = j.steps.filter((s) => s.member === m.name);
    const stop = steps.find((s) => s.kind === 'stop');
    const back = steps.find((s) => s.kind === 'wait-healthy');
    const downs: DownWindow[] = [];
    const window = (from: string, to: string | undefined, b?: DownWindow['back']): DownWindow => ({
      from,
      to,
      ms: to ? Date.parse(to) - Date.parse(from) : undefined,
      ...(b ? { back: b } : {}),
    });
    // Attempts --on-failure rollback undid: from their stop to the member back on its old version.
    for (const p of (x.putBack ?? []).filter((b) => b.member === m.name)) {
      downs.push(window(p.downFrom ?? p.at, p.at, { on: p.to, by: '--on-failure rollback' }));
    }
    if (stop?.startedAt && !downs.some((d) => d.from === stop.startedAt)) {
      const rb = (j.rollback ?? []).find((b) => b.member === m.name && b.at >= stop.startedAt!);
      if (back?.status === 'done') downs.push(window(stop.startedAt, back.finishedAt, { on: j.target, by: 'upgrade' }));
      else if (rb) downs.push(window(stop.startedAt, rb.at, { on: rb.to, by: 'kv rollback' }));
      else downs.push(window(stop.startedAt, undefined));
    }
    downs.sort((a, b) => a.from.localeCompare(b.from));
    return {
      name: m.name,
      action: m.action,
      down: downs.at(-1),
      downs,
      steps: steps.map(({ kind, status, startedAt, finishedAt, ms, detail, error }) => ({ kind, status, startedAt, finishedAt, ms, detail, error })),
    };
  });
  const cv = j.steps.find((s) => s.kind === 'wait-cluster-version');
  const stepOf = new Map(j.steps.filter((s) => s.kind === 'snapshot' && s.member).map((s) => [s.member!, s]));
  return {
    kind: 'opsctl-kv-upgrade-report',
    cluster: j.cluster,
    run: j.id,
    journal: journalFile,
    source: j.source,
    target: j.target,
    status: j.status,
    startedAt: j.createdAt,
    updatedAt: j.updatedAt,
    hop: `${j.source} → ${j.target}${j.allowSameVersion && j.source === j.target ? ' (patch)' : ''}`,
    plan: j.members.map((m, i) => ({
      order: i + 1,
      name: m.name,
      id: m.id,
      endpoint: m.endpoint,
      fromVersion: m.fromVersion,
      action: m.action,
      reason: m.reason,
      wasLeader: m.wasLeader,
    })),
    members,
    health: j.steps
      .filter((s) => HEALTH_KINDS.has(s.kind))
      .map((s) => ({ step: s.kind, member: s.member, status: s.status, at: s.finishedAt ?? s.startedAt, detail: s.detail ?? s.error })),
    snapshots: j.snapshots.map((s) => ({ ...s, sha256: hash(s.file) ?? s.sha256, at: stepOf.get(s.member)?.finishedAt })),
    clusterVersion: { from: j.source, to: j.target, status: cv?.status ?? 'pending', at: cv?.finishedAt, detail: cv?.detail ?? cv?.error },
    halt: j.halt,
    rollback: j.rollback,
    span: { from: times[0] ?? j.createdAt, to: times.at(-1) ?? j.updatedAt },
    runs,
    interruptions: interruptionsOf(j, runs),
    checks: x.checks ?? [],
    clients: clientsOf(j.source, j.target, { down: Boolean(j.downgrade) }),
    restorePoints: restorePointsOf(j, hash, sources.exists ?? existsSync),
    backups: backupsOf(j, sources.backups?.(j.cluster) ?? []),
  };
}

/** Each run that ended before the journal was done, with the run that resumed it. */
function interruptionsOf(j: Journal, runs: JournalRun[]): Interruption[] {
  const out: Interruption[] = [];
  runs.forEach((r, i) => {
    const next = runs[i + 1];
    if (r.end === 'done') return;
    if (!r.end && next) return; // (a resume always ends the run before it: see journal-runs.ts)
    if (!r.end && j.status !== 'running') return;
    const stoppedAt = r.endedAt ?? j.updatedAt;
    out.push({
      stoppedAt,
      how: r.end ?? 'no end recorded',
      detail: r.end ? r.how : 'the run is still going, or its process died without a word (kill -9, a crash): run the same command to resume',
      ...(next ? { resumedAt: next.startedAt, gapMs: Date.parse(next.startedAt) - Date.parse(stoppedAt) } : {}),
    });
  });
  return out;
}

/**
 * The exact restore command of a journal's restore point: `kv restore` with the cluster as the run
 * named it (its roll-back command's selector), the snapshot, and the version the hop started from.
 */
export function restoreCommand(j: Journal, file: string): string {
  const rollback = (j as JournalWithRuns).commands?.rollback ?? j.halt?.rollback ?? 'opsctl kv rollback';
  const selector = rollback.replace(/^opsctl kv rollback\s*/, '');
  const bin = Object.values(j.previous).find((p) => p.binDir)?.binDir;
  const q = (v: string) => (/^[\w@%+=:,./-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`);
  return ['opsctl kv restore', selector, `--snapshot ${q(file)}`, `--to-version ${j.source}`, bin ? `--target-bin ${q(bin)}` : ''].filter(Boolean).join(' ');
}

function restorePointsOf(j: Journal, hash: (file: string) => string | undefined, exists: (file: string) => boolean): RestorePointRow[] {
  const rp = restorePointOf(j);
  if (!rp) return [];
  const present = exists(rp.file);
  return [
    {
      hop: `${j.source} → ${j.target}`,
      file: rp.file,
      revision: rp.revision,
      keys: rp.keys,
      sha256: rp.sha256 ?? (present ? hash(rp.file) : undefined),
      present,
      command: restoreCommand(j, rp.file),
    },
  ];
}

/** The backups of this journal's run: the files found on this machine, and the ones made on the members' hosts. */
function backupsOf(j: Journal, found: BackupRun[]): BackupsDoc {
  return backupsMade(found, [j.id], j.steps, j.copies, j.dataCopies, j.snapshots);
}

/** The client changes of the minors this journal's hop passes (none going down). */
function clientsOf(source: string, target: string, { down }: { down: boolean }): UpgradeReportDoc['clients'] {
  const n = (v: string) => Number(v.split('.')[1]);
  const changes = down
    ? []
    : [...CLIENT_CHANGES].filter(([v]) => n(v) > n(source) && n(v) <= n(target)).flatMap(([version, list]) => list.map((change) => ({ version, change })));
  return { advice: changes.length ? STAGING_ADVICE : '', changes };
}
