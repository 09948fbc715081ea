import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { MemberSpec } from '../cluster/cluster-file.js';
import { placeOf, type MemberDriver } from '../drivers/driver.js';
import type { JournalStep } from '../journal/journal.js';
import type { BackupFate } from '../journal/journal.js';
import { backupDest, describeTarget, previousTarget, startAndWait } from './on-failure.js';
import { copiesOf, nextCopyRun } from '../journal/copies.js';
import { formatSize } from '@opsctl/shared/size.js';
import { BACKUP_MARGIN_BYTES, backupNeeds, backupSpace, describeSpace, freeAt, type BackupSpace } from '../drivers/space.js';
import { backupEstimate, onDiskBytes } from '../drivers/backup-copy.js';
import type { RunRecord, StepEnv } from './options.js';

/**
 * Where a member's data-dir backup is copied from and to, when opsctl makes the copy on this machine
 * (the local driver) and so can measure both; undefined otherwise (the command driver's backup
 * template runs on the member's host, to a path only the template knows).
 */
export async function backupPaths(
  env: Pick<StepEnv<'cluster' | 'dataDir' | 'noBackup'>, 'o' | 'driver' | 'journal'>,
  m: MemberSpec,
): Promise<{ dataDir: string; walDir?: string; dest: string } | undefined> {
  const { o, driver } = env;
  if (o.noBackup || !driver.backupDataDir || !placeOf(driver).startsHere || !driver.dataLayout) return undefined;
  const { dir, walDir } = await driver.dataLayout(m);
  return dir ? { dataDir: dir, ...(walDir ? { walDir } : {}), dest: backupDest(env, m, nextCopyRun(env.journal, m.name)) } : undefined;
}

type HostSpace = BackupSpace & { host: string };
/** The space check on the member's host (the command driver's space template; the container driver's du and df there), when the driver has one. */
function hostSpace(driver: MemberDriver | undefined): ((m: MemberSpec) => Promise<HostSpace>) | undefined {
  const f = (driver as { backupSpace?: (m: MemberSpec) => Promise<HostSpace> } | undefined)?.backupSpace;
  return driver && !placeOf(driver).startsHere && driver.backupDataDir && f ? f : undefined;
}

/**
 * Said on the plan when the backups' space cannot be checked before the stops (never silent): the
 * command driver backs up on the member's host, with no space template to measure it there.
 */
export function spaceWarning(o: StepEnv<'noBackup'>['o'], driver: MemberDriver | undefined): string | undefined {
  if (o.noBackup || !driver || !placeOf(driver).hostTemplates || !driver.backupDataDir || hostSpace(driver)) return undefined;
  return "backup space not checked: the command driver's backup runs on each member's host and there is no space template to measure it (driver.space in the cluster file or --space-cmd, printing `du -sk DATA_DIR` then `df -Pk BACKUP_DIR`; the systemd preset with dataDir has one)";
}

/**
 * Right before a member is stopped: its backup fits on the target filesystem (data dir + 10% + 64
 * MiB). The reason not to stop it, or undefined (fits, or not measurable: see backupPaths).
 */
export async function spaceBeforeStop(env: StepEnv<'cluster' | 'dataDir' | 'noBackup'>, m: MemberSpec): Promise<string | undefined> {
  const remote = env.o.noBackup ? undefined : hostSpace(env.driver);
  const at = remote ? undefined : await backupPaths(env, m);
  if (!remote && !at) return undefined;
  const s = remote ? await remote(m) : await backupSpace(at!.dataDir, at!.dest, at!.walDir);
  if (s.ok) return undefined;
  return `not stopping ${m.name}: too little free space for its data-dir backup: ${describeSpace(s)}`;
}

/**
 * Pre-flight (exit 1, nothing changed): every member still to be backed up fits on the backup
 * filesystem at once (the backups of one run are all kept: they are the way back).
 */
export async function spacePreflight(
  o: StepEnv<'cluster' | 'dataDir' | 'noBackup' | 'keepBackups'>['o'],
  driver: MemberDriver | undefined,
  members: MemberSpec[],
): Promise<{ problems: string[]; disk?: string }> {
  const remote = o.noBackup ? undefined : hostSpace(driver);
  if (remote) return hostPreflight(remote, members, o);
  if (!driver || o.noBackup || !driver.backupDataDir || !placeOf(driver).startsHere || !driver.dataLayout || !members.length) return { problems: [] };
  const root = join(o.dataDir, 'kv', 'backups', o.cluster.key);
  const sizes = await Promise.all(
    members.map(async (m) => {
      const { dir, walDir } = await driver.dataLayout!(m);
      return { m, bytes: backupEstimate(dir, walDir) };
    }),
  );
  // One margin for the run (the filesystem's own cost), the 10% for each member.
  const needed = sizes.reduce((n, s) => n + backupNeeds(s.bytes) - BACKUP_MARGIN_BYTES, 0) + BACKUP_MARGIN_BYTES;
  const free = await freeAt(root);
  const disk = `disk: the data-dir copies take up to ${formatSize(needed - BACKUP_MARGIN_BYTES)} under ${root} while the hop is mixed (${sizes
    .map((s) => `${s.m.name} ${formatSize(s.bytes)}`)
    .join(', ')}; the WAL's preallocated space is not copied), ${formatSize(free)} free; ${lifetime(o)}`;
  if (free >= needed) return { problems: [], disk };
  const problems = [
    `too little free space for the data-dir backups under ${root}: the ${members.length} member${members.length === 1 ? '' : 's'} to back up (${sizes
      .map((s) => `${s.m.name} ${formatSize(s.bytes)}`)
      .join(
        ', ',
      )}) need ${formatSize(needed)} free with the margin (10% and ${formatSize(BACKUP_MARGIN_BYTES)}), ${formatSize(free)} is free; fix: free space there, or pass --no-backup`,
  ];
  return { problems, disk };
}

/** How long the copies live: the plan says it. */
function lifetime(o: { keepBackups?: boolean }): string {
  return o.keepBackups
    ? 'kept after the hop (--keep-backups): remove them with opsctl kv backups prune'
    : "each removed once its hop is done (the hop's restore point is the way back then; --keep-backups keeps them)";
}

/** The command driver's pre-flight: each host's filesystem holds the backups of the members it has (one margin per filesystem). */
async function hostPreflight(
  measure: (m: MemberSpec) => Promise<HostSpace>,
  members: MemberSpec[],
  o: { keepBackups?: boolean },
): Promise<{ problems: string[]; disk?: string }> {
  const got: HostSpace[] = [];
  for (const m of members) got.push(await measure(m));
  const byFs = new Map<string, HostSpace[]>();
  for (const s of got) byFs.set(s.dest, [...(byFs.get(s.dest) ?? []), s]);
  const out: string[] = [];
  for (const [dest, all] of byFs) {
    const needed = all.reduce((n, s) => n + s.needed - BACKUP_MARGIN_BYTES, 0) + BACKUP_MARGIN_BYTES;
    const free = Math.min(...all.map((s) => s.free));
    if (free >= needed) continue;
    out.push(
      `too little free space for the data-dir backups on ${dest}: the backups of ${all.map((s) => `${s.dataDir} ${formatSize(s.dataBytes)}`).join(', ')} need ${formatSize(needed)} free with the margin (10% and ${formatSize(BACKUP_MARGIN_BYTES)}), ${formatSize(free)} is free; fix: free space on ${all[0]!.host}, or pass --no-backup`,
    );
  }
  const disk = got.length
    ? `disk: the data-dir copies take up to ${got.map((s) => `${formatSize(s.dataBytes)} on ${s.dest}`).join(', ')} while the hop is mixed (as \`du\` counts the data dirs); ${lifetime(o)}`
    : undefined;
  return { problems: out, ...(disk ? { disk } : {}) };
}

/** The steps from the stop on go back to pending: the member runs as before, a resume handles it from its gate. */
export function backToPending(steps: JournalStep[]): void {
  for (const s of steps) {
    if (s.member && (s.kind === 'stop' || s.kind === 'wait-stopped' || s.kind === 'backup-data')) {
      s.status = 'pending';
      delete s.error;
      delete s.detail;
    }
  }
}

/**
 * A stopped member back on its binary before the upgrade. Returns whether it is back and the words
 * for the halt reason; never throws (the halt must still be written).
 */
export async function startOnPrevious(
  env: StepEnv<'cluster' | 'now' | 'reporter' | 'session' | 'timeouts'>,
  m: MemberSpec,
  until: 'cluster' | 'member',
): Promise<{ ok: boolean; detail: string }> {
  const prev = previousTarget(env, m);
  const p = env.o.reporter.begin(`${m.name}: start again on ${describeTarget(prev)}`);
  try {
    await startAndWait(env, m, prev, until);
    const detail = `${m.name} was started again on ${describeTarget(prev)} and is healthy${until === 'cluster' ? ', the cluster healthy' : ''}`;
    p.done(detail);
    return { ok: true, detail };
  } catch (err) {
    const detail = `starting ${m.name} again on ${describeTarget(prev)} failed: ${(err as Error).message}`;
    p.fail(detail);
    return { ok: false, detail };
  }
}

/**
 * After a failed backup copy of a stopped member: a partial copy made by opsctl is removed (it only
 * takes the space a retry needs), and what the copy needs is said: the path, the space needed, free.
 */
export async function describeBackupFailure(env: StepEnv<'cluster' | 'dataDir' | 'noBackup'>, m: MemberSpec, err: Error): Promise<string> {
  const code = (err as NodeJS.ErrnoException).code;
  const remote = hostSpace(env.driver);
  if (remote) {
    // The copy ran on the member's host: what it needs, measured there again (the partial copy is the template's to clean).
    const s = await remote(m).then(describeSpace, (e: Error) => `the space could not be measured again: ${e.message}`);
    return `${err.message}; ${s}`;
  }
  if (placeOf(env.driver).hostTemplates && !env.o.noBackup && env.driver.backupDataDir)
    return `${err.message}; the space the backup needs was not measured (no space template: driver.space or --space-cmd)`;
  const at = await backupPaths(env, m).catch(() => undefined);
  if (!at) return `${err.message}${code === 'ENOSPC' ? ' (the backup target is full)' : ''}`;
  // the failed copy's own place (its {run} recorded before it began): removed, and said
  const failed = copiesOf(env.journal, m.name).pop();
  const dest = failed?.status === 'copying' ? backupDest(env, m, failed.run) : at.dest;
  await rm(dest, { recursive: true, force: true }).catch(() => undefined);
  if (failed?.status === 'copying') failed.status = 'removed';
  const s: BackupSpace | undefined = await backupSpace(at.dataDir, dest, at.walDir).catch(() => undefined);
  const space = s ? describeSpace(s) : `${dest}: free space unknown`;
  return `${code === 'ENOSPC' && !err.message.includes('ENOSPC') ? 'no space left on the device: ' : ''}${err.message}; the partial copy was removed; ${space}`;
}

/** A member whose target binary was refused before its start: back on the binary it ran (its steps pending again), the run to halt until the right one is there. */
export async function notStarted(
  env: StepEnv<'cluster' | 'now' | 'reporter' | 'session' | 'timeouts'>,
  m: MemberSpec,
): Promise<{ ok: boolean; detail: string }> {
  const back = await startOnPrevious(env, m, 'cluster');
  if (!back.ok) return back;
  backToPending(env.journal.steps.filter((s) => s.member === m.name));
  return { ok: true, detail: `${back.detail}; put the right binary there, then run the same command` };
}

/**
 * Once a hop is done (the cluster version at the target, the final health pass), its data-dir copies are
 * no longer the way back: a member cannot rejoin the cluster on the old version, and the hop's verified
 * restore point (the snapshot taken before its first stop) is what `kv restore` brings back. Each copy is
 * removed then, unless --keep-backups, so a ladder does not pile up a copy per member per hop. Run before
 * the journal says done: a kill in the middle removes the rest on the resume (removal is idempotent).
 * Returns what became of each copy (the journal's and the report's record).
 */
export async function dropBackups(env: StepEnv<'cluster' | 'dataDir' | 'keepBackups' | 'reporter'>): Promise<BackupFate[]> {
  const { o, driver, journal: j } = env;
  const taken = j.steps.filter((s) => s.kind === 'backup-data' && s.status === 'done' && s.member).map((s) => s.member!);
  // every copy of those members, each under its own {run}: an earlier attempt's too, and one a kill cut short
  // (a record of an older opsctl holds none: its one copy per member is under the run's id)
  const copies = taken.flatMap((name) => {
    const mine = copiesOf(j, name);
    return mine.length ? mine.filter((c) => c.status !== 'removed').map((c) => ({ member: name, run: c.run })) : [{ member: name, run: j.id }];
  });
  const out: BackupFate[] = [];
  for (const { member: name, run } of copies) {
    const m = o.cluster.members.find((x) => x.name === name);
    if (!m) continue;
    const where = placeOf(driver).startsHere ? `: ${backupDest(env, m, run)}` : ` on its host ({run} ${run})`;
    if (o.keepBackups) {
      out.push({ member: name, run, removed: false, detail: `kept (--keep-backups)${where}` });
      continue;
    }
    if (!driver.dropBackup) {
      out.push({
        member: name,
        run,
        removed: false,
        detail: `kept${where}: the driver has no drop-backup template (driver.dropBackup or --drop-backup-cmd) to remove it`,
      });
      continue;
    }
    const p = o.reporter.begin(`${name}: remove the data-dir copy ${run} (the hop is done: its restore point is the way back)`);
    try {
      const detail = await driver.dropBackup(m, backupDest(env, m, run), run);
      p.done(`${name}: data-dir copy removed: ${detail}`);
      out.push({ member: name, run, removed: true, detail });
    } catch (err) {
      // the hop is done all the same: a copy that could not go is said, never a reason to halt
      p.fail(`${name}: the data-dir copy ${run} could not be removed: ${(err as Error).message}`);
      out.push({ member: name, run, removed: false, detail: `NOT removed (${(err as Error).message}): remove it by hand, or with opsctl kv backups prune` });
    }
  }
  return out;
}

/**
 * Once the hop is done (before the journal says so): the copies measured where they are, then removed
 * (dropBackups), and the snapshots the way back does not need removed (dropSnapshots). Each part is done
 * once: a resume after a kill finishes what is left.
 */
export async function finishBackups(env: StepEnv<'cluster' | 'dataDir' | 'keepBackups' | 'reporter' | 'now'>): Promise<void> {
  const j = env.journal;
  if (!j.copies) {
    await measureCopies(env);
    j.copies = await dropBackups(env);
  }
  await dropSnapshots(env);
}

/**
 * What a finished run keeps of its backups by default (docs/kv-upgrade.md, "Backups: what a run keeps").
 * The way back after a finished hop is its restore point alone: `kv rollback` refuses once the cluster
 * version moved, and names `kv restore` from the restore point; `kv restore` checks a snapshot against it
 * (same SHA-256); a ladder's hops each keep their own. The snapshots taken before the later stops proved
 * that a healthy member served a verified snapshot right then; nothing reads them after the run.
 */
export const KEPT_BY_DEFAULT =
  'a finished run keeps its restore point (the verified snapshot taken before its first stop: the way back once the cluster version moved) and removes the snapshots taken before its later stops, and its data-dir copies where the driver can (a drop-backup template); --keep-backups keeps them all; older runs stay until opsctl kv backups prune --keep N';

/**
 * Before the copies are removed (once the hop is done): each copy the driver made on a member's host
 * measured there (a `du` through its host shell), all at once; a copy measured before keeps its figure.
 */
export async function measureCopies(env: Pick<StepEnv<'cluster' | 'dataDir'>, 'o' | 'driver' | 'journal'>): Promise<void> {
  const { driver, journal: j, o } = env;
  const todo = (j.dataCopies ?? []).filter((c) => c.status === 'done' && c.bytes === undefined);
  await Promise.all(
    todo.map(async (c) => {
      const m = o.cluster.members.find((x) => x.name === c.member);
      if (!m) return void (c.sizeUnknown = `${c.member} is not in the cluster`);
      if (placeOf(driver).startsHere) {
        // (the local driver's copy is under opsctl's data directory: measured here)
        const dest = backupDest(env, m, c.run);
        Object.assign(c, existsSync(dest) ? { path: dest, bytes: onDiskBytes(dest) } : { path: dest, sizeUnknown: `${dest} is gone` });
        return;
      }
      if (!driver.copySize) return void (c.sizeUnknown = 'the driver cannot measure its copies');
      const s = await driver.copySize(m, c.run).catch((err: Error) => ({ why: err.message, path: undefined }));
      c.host = m.host ?? hostOf(m.endpoint);
      if (s.path) c.path = s.path;
      if ('bytes' in s) {
        c.bytes = s.bytes;
        delete c.sizeUnknown;
      } else c.sizeUnknown = s.why;
    }),
  );
}

function hostOf(endpoint: string): string {
  try {
    return new URL(endpoint).hostname.replace(/^\[(.*)\]$/, '$1');
  } catch {
    return endpoint;
  }
}

/**
 * The snapshots a finished run no longer needs removed (KEPT_BY_DEFAULT): every one but the restore point,
 * unless --keep-backups. Each is marked in the record (`removed`), so a resume after a kill removes the rest
 * and the report still names what was taken. Returns how many went and what they took.
 */
export async function dropSnapshots(env: {
  o: Pick<StepEnv<'keepBackups' | 'now'>['o'], 'keepBackups' | 'now'>;
  journal: Pick<RunRecord, 'snapshots' | 'restorePoint'>;
}): Promise<{ removed: number; bytes: number }> {
  const { o, journal: j } = env;
  // (the recorded restore point; an older record's is its first snapshot, as restorePointOf reads it)
  const keep = (j.restorePoint ?? j.snapshots[0])?.file;
  if (o.keepBackups || !keep) return { removed: 0, bytes: 0 };
  let removed = 0;
  let bytes = 0;
  for (const s of j.snapshots) {
    if (s.file === keep || s.removed) continue;
    await rm(s.file, { force: true });
    s.removed = new Date(o.now()).toISOString();
    removed++;
    bytes += s.bytes;
  }
  return { removed, bytes };
}
