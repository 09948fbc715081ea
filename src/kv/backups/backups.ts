import { existsSync, lstatSync, readdirSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { OpsError } from '../../core/errors.js';
import { onDiskBytes } from '../drivers/backup-copy.js';
import { journalPath, journalsDir, lockJournal, writeJournal, type Journal } from '../journal/journal.js';
import { readJournal } from '../journal/read.js';
import { readRestore, restorePath, type RestoreRecord } from '../journal/restore-record.js';
import { loadSandbox, sandboxCluster } from '../sandbox/sandbox.js';

/**
 * Every backup opsctl made on this machine, found where the upgrade and restore put them:
 * - data-dir copies taken after each stop: DATA/kv/backups/CLUSTER/RUN-MEMBER, a member's later copies of
 *   the run RUN.2-MEMBER, RUN.3-MEMBER … (the local driver; the command driver's backups live on the
 *   members' hosts and are not seen here);
 * - the verified snapshots taken before each stop (the first is the restore point):
 *   DATA/kv/snapshots/CLUSTER/RUN-MEMBER.db;
 * - a sandbox member's data dir kept by `kv restore` (DIR.before-restore-RUN) or by `--on-failure
 *   rollback` (DIR.failed-RUN, or DIR.failed-RUN.N after the member's Nth copy).
 * A run is one upgrade (its journal id) or one restore; its backups go together.
 */

export type BackupKind = 'data-dir' | 'snapshot' | 'before-restore' | 'failed-data-dir' | 'host-copy';

export interface BackupItem {
  kind: BackupKind;
  member: string;
  path: string;
  /** Bytes on disk, as `du -sB1` counts them (files and directories; holes cost nothing). */
  bytes: number;
  /** Last modified (ISO). */
  date: string;
  /** A copy on a member's host (the command driver's backup template): the host, its size there or why it is not known. */
  host?: string;
  measured?: false;
  sizeUnknown?: string;
  /** A host copy's record: the journal that names it and its {run} (what the drop-backup template removes). */
  journal?: string;
  copyRun?: string;
}

export interface BackupRun {
  cluster: string;
  run: string;
  kind: 'upgrade' | 'restore';
  date: string;
  bytes: number;
  items: BackupItem[];
  /** The journal that records this run (an upgrade's), and its status. */
  journal?: { file: string; status: Journal['status'] };
  /** Why a journal still needs these backups (an upgrade or roll-back in progress), if it does. */
  neededBy?: string;
}

/** A journal in one of these states may still need its backups: a resume, a roll-back or its restore. */
const IN_PROGRESS = new Set<Journal['status']>(['running', 'halted', 'interrupted', 'rolling-back']);

/** RUN-MEMBER, or RUN.N-MEMBER for a member's Nth copy of the run (upgrade/copies.ts): listed with its run. */
const RUN = /^(\d{8}T\d{6}-[0-9a-f]+)(?:\.\d+)?-(.+)$/;

/** What a file or a tree takes on disk, as `du -sB1` counts it (a sparse copy's holes cost nothing). */
export const duBytes = onDiskBytes;

function item(kind: BackupKind, member: string, path: string): BackupItem {
  return { kind, member, path, bytes: duBytes(path), date: lstatSync(path).mtime.toISOString() };
}

/** The cluster's restore journal, when it can be read (a half-done restore's kept dirs are its way back). */
function safeRestore(dataDir: string, cluster: string): RestoreRecord | undefined {
  try {
    return readRestore(restorePath(dataDir, cluster));
  } catch {
    return undefined;
  }
}

function safeJournal(dataDir: string, cluster: string): Journal | undefined {
  try {
    const f = journalPath(dataDir, cluster);
    return existsSync(f) ? readJournal(f) : undefined;
  } catch {
    return undefined;
  }
}

/** Every backup under DATA, grouped in runs, newest run first within each cluster. */
export function findBackups(dataDir: string): BackupRun[] {
  const runs = new Map<string, BackupRun>();
  const add = (cluster: string, run: string, kind: BackupRun['kind'], it: BackupItem) => {
    const k = `${cluster}/${run}`;
    const r = runs.get(k) ?? { cluster, run, kind, date: it.date, bytes: 0, items: [] };
    r.items.push(it);
    r.bytes += it.bytes;
    if (it.date > r.date) r.date = it.date;
    runs.set(k, r);
  };
  for (const [sub, kind] of [
    ['backups', 'data-dir'],
    ['snapshots', 'snapshot'],
  ] as const) {
    const root = join(dataDir, 'kv', sub);
    if (!existsSync(root)) continue;
    for (const cluster of readdirSync(root)) {
      const dir = join(root, cluster);
      if (!lstatSync(dir).isDirectory()) continue;
      for (const name of readdirSync(dir)) {
        const m = RUN.exec(kind === 'snapshot' ? name.replace(/\.db$/, '') : name);
        if (!m || (kind === 'snapshot' && !name.endsWith('.db'))) continue;
        add(cluster, m[1]!, 'upgrade', item(kind, m[2]!, join(dir, name)));
      }
    }
  }
  // The sandbox's kept data dirs (restore and --on-failure rollback), beside each member's data dir.
  const spec = loadSandbox(dataDir);
  if (spec) {
    const cluster = sandboxCluster(spec).key;
    for (const m of spec.members) {
      if (!m.dataDir || !existsSync(dirname(m.dataDir))) continue;
      const base = basename(m.dataDir);
      for (const name of readdirSync(dirname(m.dataDir))) {
        const kept = name.startsWith(`${base}.before-restore-`) ? 'before-restore' : name.startsWith(`${base}.failed-`) ? 'failed-data-dir' : undefined;
        if (!kept) continue;
        // (DIR.failed-RUN.N: the Nth copy's put-back, listed with its run)
        const run = name
          .slice(name.indexOf(kept === 'before-restore' ? '.before-restore-' : '.failed-'))
          .replace(/^\.(before-restore|failed)-/, '')
          .replace(/\.\d+$/, '');
        add(cluster, run, kept === 'before-restore' ? 'restore' : 'upgrade', item(kept, m.name, join(dirname(m.dataDir), name)));
      }
    }
  }
  for (const c of hostCopies(dataDir)) add(c.cluster, c.run, 'upgrade', c.item);
  const journals = new Map<string, Journal | undefined>();
  const out = [...runs.values()];
  for (const r of out) {
    if (!journals.has(r.cluster)) journals.set(r.cluster, safeJournal(dataDir, r.cluster));
    const j = journals.get(r.cluster);
    if (j?.id === r.run) {
      r.journal = { file: journalPath(dataDir, r.cluster), status: j.status };
      if (IN_PROGRESS.has(j.status)) {
        r.neededBy = `${r.journal.file} (upgrade ${j.id} to ${j.target} is ${j.status}: its backups are the way back)`;
      }
    }
    const restore = r.kind === 'restore' ? safeRestore(dataDir, r.cluster) : undefined;
    if (restore?.id === r.run && restore.status === 'running') {
      r.neededBy = `${restorePath(dataDir, r.cluster)} (restore ${restore.id} is half done: its kept data dirs are the old data)`;
    }
    r.items.sort((a, b) => a.member.localeCompare(b.member) || a.kind.localeCompare(b.kind));
  }
  // Newest first: run ids begin with their UTC time (YYYYMMDDTHHMMSS).
  return out.sort((a, b) => a.cluster.localeCompare(b.cluster) || b.run.localeCompare(a.run));
}

/**
 * The data-dir copies runs made on the members' hosts (a command driver's backup template, each under its
 * own {run}), from every journal here: each copy made and not removed since (the drop-backup template, or
 * the local driver's copy under DATA/kv/backups, which is listed as a directory). Its size is the one
 * measured on its host as its run finished (upgrade/backup-guard.ts, measureCopies), else why it is not known.
 */
function hostCopies(dataDir: string): Array<{ cluster: string; run: string; item: BackupItem }> {
  // every record of a run: the cluster's journal, the runs it replaced (CLUSTER.runs/), a ladder's hops (CLUSTER.ladder/)
  const byId = new Map<string, Array<{ file: string; j: Journal }>>();
  for (const file of journalFiles(journalsDir(dataDir))) {
    let j: Journal | undefined;
    try {
      j = readJournal(file);
    } catch {
      continue;
    }
    if (!j?.dataCopies?.length || !j.cluster) continue;
    byId.set(j.id, [...(byId.get(j.id) ?? []), { file, j }]);
  }
  const out: Array<{ cluster: string; run: string; item: BackupItem }> = [];
  for (const records of byId.values()) {
    // (the newest record of the run speaks for it; a removal any of them records counts)
    const { file, j: journal } = records.reduce((a, b) => (b.j.updatedAt > a.j.updatedAt ? b : a));
    const fates = records.flatMap((r) => r.j.copies ?? []);
    for (const c of journal.dataCopies!) {
      if (c.status !== 'done') continue;
      if (fates.some((f) => f.removed && f.member === c.member && (f.run === undefined || f.run === c.run))) continue;
      if (existsSync(join(dataDir, 'kv', 'backups', journal.cluster, `${c.run}-${c.member}`))) continue;
      // (a copy of the local driver's, measured and gone: not a host's)
      if (c.path !== undefined && c.host === undefined) continue;
      const endpoint = journal.members.find((m) => m.name === c.member)?.endpoint;
      const host = c.host ?? (endpoint ? hostOf(endpoint) : 'its host');
      const sizeUnknown = c.bytes === undefined ? (c.sizeUnknown ?? notMeasured(journal.status)) : undefined;
      out.push({
        cluster: journal.cluster,
        run: journal.id,
        item: {
          kind: 'host-copy',
          member: c.member,
          path: c.path ? `${host}:${c.path}` : `on ${host}: the backup template's copy, {run} ${c.run}`,
          bytes: c.bytes ?? 0,
          date: c.at,
          host,
          ...(sizeUnknown !== undefined ? { measured: false as const, sizeUnknown } : {}),
          journal: file,
          copyRun: c.run,
        },
      });
    }
  }
  return out;
}

/** The journal files under `dir`: its own, and those one folder down (CLUSTER.runs/, CLUSTER.ladder/). */
function journalFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isFile() && e.name.endsWith('.json')) out.push(join(dir, e.name));
    else if (e.isDirectory() && /\.(runs|ladder)$/.test(e.name))
      for (const f of readdirSync(join(dir, e.name))) if (f.endsWith('.json')) out.push(join(dir, e.name, f));
  }
  return out;
}

/** Why a host copy of a run has no size: its run measures its copies as it finishes. */
function notMeasured(status: Journal['status']): string {
  return status === 'done'
    ? 'not measured (its run was made by an older opsctl)'
    : `not measured yet: its run is ${status}, and measures its copies on their hosts as it finishes`;
}

function hostOf(endpoint: string): string {
  try {
    return new URL(endpoint).hostname;
  } catch {
    return endpoint;
  }
}

export interface PrunePlan {
  keep: BackupRun[];
  remove: BackupRun[];
  /** Runs past --keep that a journal still needs: the prune is refused while there are any. */
  blocked: BackupRun[];
}

/** Per cluster: the `keep` newest runs stay, the rest go, except those a journal still needs. */
export function planPrune(runs: BackupRun[], keep: number): PrunePlan {
  const plan: PrunePlan = { keep: [], remove: [], blocked: [] };
  const seen = new Map<string, number>();
  for (const r of runs) {
    const n = seen.get(r.cluster) ?? 0;
    seen.set(r.cluster, n + 1);
    if (n < keep) plan.keep.push(r);
    else if (r.neededBy) plan.blocked.push(r);
    else plan.remove.push(r);
  }
  return plan;
}

/** Thrown when a cluster's journal is locked (an upgrade, roll-back or restore is running now). */
export class BackupsLockedError extends Error {
  constructor(readonly journal: string) {
    super(`${journal} is locked: a kv upgrade, rollback or restore of that cluster is running now`);
  }
}

/**
 * Removes the runs' backups, each cluster under its journal lock (no upgrade or restore can start
 * meanwhile, and none is running; the lock of a run that died is taken over, told through `notice`).
 * Returns the bytes freed (as `du -sB1` counted them before).
 */
export async function removeRuns(dataDir: string, runs: BackupRun[], notice: (text: string) => void, hosts?: HostDrop): Promise<number> {
  let freed = 0;
  for (const cluster of new Set(runs.map((r) => r.cluster))) {
    const file = journalPath(dataDir, cluster);
    let unlock: () => Promise<void>;
    try {
      unlock = await lockJournal(file, 4000, notice);
    } catch (err) {
      if (err instanceof OpsError && err.code === 'locked') throw new BackupsLockedError(file);
      throw err;
    }
    try {
      for (const r of runs.filter((x) => x.cluster === cluster)) {
        // (a copy on a member's host: removed there by the driver's drop-backup template, when the caller has the driver)
        for (const it of r.items) {
          if (it.kind === 'host-copy') {
            if (hosts) freed += await dropHostCopy(it, hosts);
            continue;
          }
          freed += duBytes(it.path);
          rmSync(it.path, { recursive: true, force: true });
        }
      }
    } finally {
      await unlock();
    }
  }
  return freed;
}

/** How a prune removes the copies on the members' hosts: the driver of the cluster file given (its drop-backup template). */
export interface HostDrop {
  /** Removes one copy on its host; the detail line (the template as it ran). Throws when it failed. */
  drop(item: BackupItem): Promise<string>;
  /** Said for each copy: removed (with its detail) or not (why). */
  said(item: BackupItem, outcome: { removed: boolean; detail: string }): void;
}

/**
 * One copy on a member's host removed by the drop-backup template, and recorded in the journal that names it
 * (a BackupFate, as a finished hop records its own), so it is never listed again. Returns the bytes it took
 * there (0 when not known, or when it could not be removed).
 */
async function dropHostCopy(it: BackupItem, hosts: HostDrop): Promise<number> {
  let detail: string;
  try {
    detail = await hosts.drop(it);
  } catch (err) {
    hosts.said(it, { removed: false, detail: (err as Error).message });
    return 0;
  }
  const j = it.journal ? readJournal(it.journal) : undefined;
  if (j && it.journal) {
    (j.copies ??= []).push({ member: it.member, run: it.copyRun ?? j.id, removed: true, detail: `removed by kv backups prune: ${detail}` });
    await writeJournal(it.journal, j, Date.now());
  }
  hosts.said(it, { removed: true, detail });
  return it.measured === false ? 0 : it.bytes;
}

/**
 * `kv sandbox down`: removes the sandbox's own backups (every run of its cluster); returns what went.
 * Call it before the sandbox directory is removed (it finds the kept data dirs through the sandbox).
 */
export async function removeSandboxBackups(dataDir: string, say?: (line: string) => void): Promise<{ runs: number; bytes: number; paths: string[] }> {
  const spec = loadSandbox(dataDir);
  if (!spec) return { runs: 0, bytes: 0, paths: [] };
  const cluster = sandboxCluster(spec).key;
  const mine = findBackups(dataDir).filter((r) => r.cluster === cluster);
  const bytes = await removeRuns(dataDir, mine, (text) => say?.(text));
  for (const sub of ['backups', 'snapshots']) {
    const dir = join(dataDir, 'kv', sub, cluster);
    if (existsSync(dir) && readdirSync(dir).length === 0) rmSync(dir, { recursive: true, force: true });
  }
  say?.(
    mine.length
      ? `removed the sandbox's backups: ${mine.length} run(s), ${mine.reduce((n, r) => n + r.items.length, 0)} item(s), ${humanBytes(bytes)} (${bytes} bytes) freed`
      : 'the sandbox made no backups: none to remove',
  );
  return { runs: mine.length, bytes, paths: mine.flatMap((r) => r.items.map((i) => i.path)) };
}

/** 1234567 → "1.2 MB" (SI, like du -h --si). */
export function humanBytes(n: number): string {
  if (n < 1000) return `${n} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let v = n;
  let u = -1;
  while (v >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  return `${v.toFixed(1)} ${units[u]}`;
}
