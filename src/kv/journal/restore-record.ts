/**
 * kv restore's journal (journals/<cluster>.restore/restore.json): the restore under way or last done — its run id
 * (the kept dirs' DIR.before-restore-<id>, the new cluster token), the snapshot by its SHA-256, the version
 * and binaries every member starts on, each member's peer URL, and one step per part in the order it runs
 * (`prepare`: the restored data built beside each member's; `stop/<m>`, leader first; `restore-data/<m>`:
 * the swap; `start/<m>`; `verify`: every member healthy on the version, the revision and keys checked).
 * Each step is written `running` before it begins (durably: the write-ahead record a resume reads) and
 * `done` with the next one's `running`. A re-run of the identical command resumes this restore from its
 * first step not done (every step is safe to redo: a stop and a start ask first, a swap already made is
 * seen as made), never a second restore over members already swapped.
 */
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { readOwnFileSync } from '../../core/local-file.js';
import { OpsError } from '../../core/errors.js';
import type { MemberTarget } from '../drivers/driver.js';
import { JournalInvalid, stepsNameMembers } from './read.js';
import { journalsDir } from './journal.js';

export type RestoreStepKind = 'prepare' | 'stop' | 'restore-data' | 'start' | 'verify';

export interface RestoreStep {
  id: string;
  member?: string;
  kind: RestoreStepKind;
  status: 'pending' | 'running' | 'done';
  detail?: string;
}

export interface RestoreRecord {
  version: 1;
  kind: 'restore';
  /** The run id: the kept dirs' suffix and the new cluster token's. */
  id: string;
  cluster: string;
  /** `abandoned`: given up before any member was stopped (nothing changed): not unfinished business. */
  status: 'running' | 'done' | 'abandoned';
  snapshot: { file: string; sha256: string; revision: string; liveKeys: number };
  /** The minor every member starts on. */
  to: string;
  token: string;
  members: Array<{ name: string; endpoint: string; peerUrl: string; target: MemberTarget }>;
  steps: RestoreStep[];
  createdAt: string;
  updatedAt: string;
  owner: { pid: number; host: string };
  /** Each process that worked on it (a resume adds one). */
  runs: Array<{ pid: number; host: string; startedAt: string }>;
  /** Once done: what the verification saw. */
  result?: { revision: string; keys: number; clusterVersion: string; note?: string };
}

/** Under its own folder, as the ladder's: the upgrade journal stays the one `<cluster>.json` beside it. */
export function restorePath(dataDir: string, key: string): string {
  return join(journalsDir(dataDir), `${key}.restore`, 'restore.json');
}

/** A new record, every step pending; `order`: the members in their stop order (the leader first). */
export function newRestoreRecord(
  r: Pick<RestoreRecord, 'id' | 'cluster' | 'snapshot' | 'to' | 'token' | 'members'>,
  order: string[],
  now: number,
): RestoreRecord {
  const at = new Date(now).toISOString();
  const each = (kind: RestoreStepKind, names: string[]): RestoreStep[] => names.map((m) => ({ id: `${kind}/${m}`, member: m, kind, status: 'pending' }));
  const names = r.members.map((m) => m.name);
  return {
    version: 1,
    kind: 'restore',
    ...r,
    status: 'running',
    steps: [
      { id: 'prepare', kind: 'prepare', status: 'pending' },
      ...each('stop', order),
      ...each('restore-data', names),
      ...each('start', names),
      { id: 'verify', kind: 'verify', status: 'pending' },
    ],
    createdAt: at,
    updatedAt: at,
    owner: { pid: process.pid, host: hostname() },
    runs: [],
  };
}

/** Whether any member was stopped (or its stop begun): from then on the restore is half done, not merely planned. */
export const stopsBegun = (r: RestoreRecord): boolean => r.steps.some((s) => s.kind === 'stop' && s.status !== 'pending');

/** Whether a restored member may have come up (its start begun) before this run: clients may have written since. */
export const startsBegun = (r: RestoreRecord): boolean => r.steps.some((s) => s.kind === 'start' && s.status !== 'pending');

/** The record's progress in words: the members stopped, swapped and started, and the step it goes on from. */
export function restoreProgress(r: RestoreRecord): string {
  const of = (kind: RestoreStepKind) =>
    r.steps
      .filter((s) => s.kind === kind && s.status === 'done')
      .map((s) => s.member)
      .join(', ') || 'none';
  const next = r.steps.find((s) => s.status !== 'done');
  return `stopped: ${of('stop')}; data restored: ${of('restore-data')}; started: ${of('start')}${next ? `; next: ${next.id}${next.status === 'running' ? ' (begun)' : ''}` : ''}`;
}

const Step = z.object({
  id: z.string().min(1),
  member: z.string().min(1).optional(),
  kind: z.enum(['prepare', 'stop', 'restore-data', 'start', 'verify']),
  status: z.enum(['pending', 'running', 'done']),
});
const Schema = z
  .looseObject({
    version: z.literal(1),
    kind: z.literal('restore'),
    id: z.string().regex(/^[\w.-]+$/),
    cluster: z.string().min(1),
    status: z.enum(['running', 'done', 'abandoned']),
    snapshot: z.looseObject({ file: z.string().min(1), sha256: z.string().regex(/^[0-9a-f]{64}$/), revision: z.string(), liveKeys: z.number() }),
    to: z.string().min(1),
    token: z.string().min(1),
    members: z.array(
      z.looseObject({
        name: z.string().min(1),
        endpoint: z.string().min(1),
        peerUrl: z.string().min(1),
        target: z.looseObject({ version: z.string().min(1), binDir: z.string().optional() }),
      }),
    ),
    steps: z.array(Step),
  })
  .superRefine((r, ctx) => stepsNameMembers(r.steps, new Set(r.members.map((m) => m.name)), "the restore's", ctx));

const WHAT = 'the kv restore journal';

/** The record at `file` (undefined when there is none), checked: one that cannot be trusted is refused, never taken for "no restore". */
export function readRestore(file: string): RestoreRecord | undefined {
  if (!existsSync(file)) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(readOwnFileSync(file, { what: WHAT }));
  } catch (err) {
    if (err instanceof OpsError) throw err;
    throw new JournalInvalid(file, err instanceof SyntaxError ? `not JSON (truncated?): ${err.message}` : (err as Error).message, WHAT);
  }
  const r = Schema.safeParse(raw);
  if (!r.success) {
    const [issue] = r.error.issues;
    throw new JournalInvalid(file, issue ? `${issue.path.join('.') || '(top)'}: ${issue.message}` : r.error.message, WHAT);
  }
  return raw as RestoreRecord;
}
