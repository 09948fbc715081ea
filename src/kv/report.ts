import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import type { Journal, JournalStep } from './journal.js';

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
  plan: Array<{ order: number; name: string; id: string; endpoint: string; fromVersion: string; action: string; reason: string; wasLeader: boolean }>;
  /** Per member: its steps and its down window (from the stop to healthy again on the target). */
  members: Array<{
    name: string;
    action: string;
    down?: { from: string; to?: string; ms?: number };
    steps: Array<Pick<JournalStep, 'kind' | 'status' | 'startedAt' | 'finishedAt' | 'ms' | 'detail' | 'error'>>;
  }>;
  health: Array<{ step: string; member?: string; status: string; at?: string; detail?: string }>;
  snapshots: Array<{ member: string; file: string; revision: string; bytes: number; sha256?: string; at?: string }>;
  clusterVersion: { from: string; to: string; status: string; at?: string; detail?: string };
  halt?: Journal['halt'];
  /** `kv rollback` of this run: each member as it was brought back. */
  rollback?: Journal['rollback'];
  /** The earliest and latest times the journal records (the timeline's scale). */
  span: { from: string; to: string };
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

/** Pure: the report of a journal (`hash` reads a snapshot's hash; injected for tests). */
export function buildReport(j: Journal, journalFile: string, hash: (file: string) => string | undefined = snapshotTrailerHash): UpgradeReportDoc {
  const times = [j.createdAt, j.updatedAt, ...j.steps.flatMap((s) => [s.startedAt, s.finishedAt])].filter((t): t is string => Boolean(t)).sort();
  const members = j.members.map((m) => {
    const steps = j.steps.filter((s) => s.member === m.name);
    const stop = steps.find((s) => s.kind === 'stop');
    const back = steps.find((s) => s.kind === 'wait-healthy');
    let down: UpgradeReportDoc['members'][number]['down'];
    if (stop?.startedAt) {
      const to = back?.status === 'done' ? back.finishedAt : undefined;
      down = { from: stop.startedAt, to, ms: to ? Date.parse(to) - Date.parse(stop.startedAt) : undefined };
    }
    return {
      name: m.name,
      action: m.action,
      down,
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
    snapshots: j.snapshots.map((s) => ({ ...s, sha256: hash(s.file), at: stepOf.get(s.member)?.finishedAt })),
    clusterVersion: { from: j.source, to: j.target, status: cv?.status ?? 'pending', at: cv?.finishedAt, detail: cv?.detail ?? cv?.error },
    halt: j.halt,
    rollback: j.rollback,
    span: { from: times[0] ?? j.createdAt, to: times.at(-1) ?? j.updatedAt },
  };
}
