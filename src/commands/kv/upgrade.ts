import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { confirmDestructive, notDone, type Destructive } from '../../core/confirm.js';
import { InterruptedError, UsageError } from '../../core/errors.js';
import { whyNoPrompt } from '../../core/no-prompt.js';
import { fmtMs, type UpgradeReport } from '../../kv/upgrade/options.js';
import { capabilitiesOf } from '../../kv/drivers/driver.js';
import type { LadderReport } from '../../kv/ladder/record.js';
import { LADDER_MINORS, LADDER_TARGETS, ladderSpan, ladderWords } from '@opsctl/shared/etcd-ladder.js';
import { ruleIds } from '../../kv/rules/index.js';
import { PROOF_RULES } from '../../kv/rules/trial.js';
import { warningLines } from '../../kv/rules/summary.js';
import type { SkipTrial } from '../../kv/ladder/record.js';
import type { CheckRow } from '../../kv/rules/types.js';
import { journalPath } from '../../kv/journal/journal.js';
import { downMemberWords } from './lib/last-words.js';
import { duration, reporter, requireBackupTemplate, resolveCluster, rollingFlags, shellLine, timeouts } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './upgrade.spec.js';
import { changesExit } from '../action.js';
import { openOffsite, s3Settings } from './lib/offsite.js';
import type { S3Settings } from '../../kv/offsite/target.js';
import type { OffsiteUploader } from '../../kv/upgrade/options.js';

/** The minors kv restore starts members on: every minor of the ladder's table (from 3.5 on restored with etcdutl). */
export const KNOWN_MINORS = LADDER_MINORS;
const TARGETS_HELP = `${ladderSpan()} (one hop per minor from the cluster's version: ${ladderWords()}); with --allow-same-version a rolling restart on ${ladderSpan(LADDER_MINORS)}`;

/**
 * `--target-bin`, repeatable: `VERSION=DIR` per hop, or one `DIR` for a one-hop run (key `*`).
 * Refused: a version that is not a ladder minor, the same version twice, an empty DIR.
 */
export function parseTargetBins(raw: string[] | string | undefined): Record<string, string> {
  const list = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  const out: Record<string, string> = {};
  for (const item of list) {
    const m = /^(\d+\.\d+)=(.*)$/.exec(item);
    const [key, dir] = m ? [m[1]!, m[2]!] : ['*', item];
    if (!dir.trim())
      throw new UsageError(`--target-bin: "${item}" names no directory`, {
        field: '--target-bin',
        hint: 'write --target-bin 3.4=/opt/etcd-3.4 (or one DIR for a one-hop run)',
      });
    if (key !== '*' && !LADDER_MINORS.includes(key))
      throw new UsageError(`--target-bin ${item}: ${key} is not a minor of the ladder`, {
        field: '--target-bin',
        hint: `one of ${LADDER_TARGETS.join(', ')}`,
      });
    if (out[key] !== undefined)
      throw new UsageError(`--target-bin: ${key === '*' ? 'a directory' : key} given twice`, {
        field: '--target-bin',
        hint: 'give each hop one directory: --target-bin 3.3=DIR --target-bin 3.4=DIR …',
      });
    out[key] = dir;
  }
  return out;
}

export type Options = OptionsOf<typeof spec>;

/** A repeatable, comma-separated list flag's values. */
function listOf(raw: string[] | string | undefined): string[] {
  return (raw === undefined ? [] : Array.isArray(raw) ? raw : [raw])
    .flatMap((x) => x.split(','))
    .map((x) => x.trim())
    .filter(Boolean);
}

/**
 * `--skip-trial M,… --skip-reason WHY`: the members the operator lets be stopped unproven, by name and
 * with a reason (both or neither); each must be a member of the cluster (checked once it is known).
 */
export function skipTrial(raw: string[] | string | undefined, reason: string | undefined): SkipTrial | undefined {
  const members = listOf(raw);
  if (!members.length) {
    if (reason !== undefined)
      throw new UsageError('--skip-reason: no --skip-trial to give a reason for', {
        field: '--skip-reason',
        hint: 'drop it, or name the members: --skip-trial M1,M2',
      });
    return undefined;
  }
  if (!reason?.trim())
    throw new UsageError('--skip-trial needs --skip-reason: why these members may be stopped without their trial starts', {
      field: '--skip-reason',
      hint: `write it for the journal and the report: --skip-trial ${members.join(',')} --skip-reason "…"`,
    });
  return { members: [...new Set(members)], reason: reason.trim() };
}

/** Every member --skip-trial names is one of the cluster's. */
function checkSkipped(skip: SkipTrial | undefined, members: Array<{ name: string }>): void {
  const unknown = skip?.members.filter((n) => !members.some((m) => m.name === n)) ?? [];
  if (unknown.length)
    throw new UsageError(`--skip-trial: no member is called ${unknown.join(', ')}`, {
      field: '--skip-trial',
      hint: `the members: ${members.map((m) => m.name).join(', ')}`,
    });
}

/** `--ignore-check ID` (repeatable, or comma-separated): each a rule of the rulebook, else refused naming the known ones. */
export function checkIds(raw: string[] | string | undefined): string[] {
  const ids = listOf(raw);
  const proof = ids.filter((id) => PROOF_RULES.has(id));
  if (proof.length)
    throw new UsageError(`--ignore-check ${proof.join(', ')}: the trials are the proof before every stop, not a rule to ignore`, {
      field: '--ignore-check',
      hint: 'to stop a member without its proof, name it: --skip-trial MEMBER --skip-reason "WHY" (kept in the journal and the report)',
    });
  const known = ruleIds().filter((id) => !PROOF_RULES.has(id));
  const unknown = ids.filter((id) => !known.includes(id));
  if (unknown.length)
    throw new UsageError(`--ignore-check: no rule is called ${unknown.join(', ')}`, {
      field: '--ignore-check',
      hint: `the rules (ids in brackets on the plan): ${known.join(', ')}`,
    });
  return ids;
}

/**
 * `kv upgrade --to 3.3`: pre-flight (refuse with exit 1), the plan (--dry-run stops), then one
 * member at a time with a journal; halts at the first failure with exit 3 and the roll-back command;
 * Ctrl-C stops at a safe point with exit 130; a re-run resumes.
 */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  if (!/^\d+\.\d+$/.test(opts.to))
    throw new UsageError(`--to: "${opts.to}" is not a minor version`, { field: '--to', hint: `write it as 3.3 (supported targets: ${TARGETS_HELP})` });
  if (!LADDER_MINORS.includes(opts.to)) {
    throw new UsageError(`--to: ${opts.to} is not a supported target`, { field: '--to', hint: `supported targets: ${TARGETS_HELP}` });
  }
  const { onFailure, settle } = rollingFlags(opts, 'its old binary');
  const t = timeouts(opts);
  if (opts.report && opts.dryRun)
    throw new UsageError('--report: a dry run changes nothing and records no run to report', {
      field: '--report',
      hint: 'drop --report to see the plan, or drop --dry-run to upgrade and write the report',
    });
  const reportFile = opts.report ? (await import('./lib/report-file.js')).reportPath(ctx, opts.report) : undefined;
  const targetBins = parseTargetBins(opts.targetBin);
  const ignoreChecks = checkIds(opts.ignoreCheck);
  const skipped = skipTrial(opts.skipTrial, opts.skipReason);
  const trialTimeoutS = duration(opts.trialTimeout, '--trial-timeout', 30_000) / 1000;
  const { cluster, driver, selector, session } = await resolveCluster(ctx, opts);
  checkSkipped(skipped, cluster.members);
  const can = capabilitiesOf(driver);
  if (Object.keys(targetBins).length && can.releases) {
    throw new UsageError(`--target-bin: the sandbox runs ${can.what} members`, {
      field: '--target-bin',
      hint: `drop --target-bin (${can.what} members switch version themselves), or start the sandbox with --etcd-bin DIR`,
    });
  }
  const noBackup = opts.backup === false;
  // Never a silent "skipped": the seed says back up every data dir (a snapshot holds only v3 data).
  requireBackupTemplate(driver, { noBackup, example: '--backup-cmd "ssh {host} sudo cp -a /var/lib/etcd /var/lib/etcd.bak-{run}", ' });
  // Off-host: the store proved writable (a probe object written and deleted) before the plan, so a
  // bucket the identity may not write refuses the run before any member stops, --dry-run included.
  const offsite = opts.backupTo ? await offsiteUploader(opts.backupTo, s3Settings(opts), ctx) : undefined;
  ctx.handlesInterrupt = true;
  const rollbackCommand = shellLine(['opsctl', 'kv', 'rollback', ...selector]);
  // a second Ctrl-C or a closed pipe while a member is down: say which, and the two ways on
  ctx.lastWords = downMemberWords(ctx, cluster.key, rollbackCommand);
  const writeReport = async (journal: string) => {
    const { writeReport: write } = await import('./lib/report-file.js');
    const doc = await write(reportFile!, journal);
    ctx.io.err(`report: ${reportFile}`);
    return doc;
  };
  let report: UpgradeReport;
  let checks: CheckRow[] = [];
  let cloneLoad: Awaited<ReturnType<Awaited<ReturnType<typeof import('./lib/rehearsal.js').cloneRun>>['stop']>> | undefined;
  try {
    const common = {
      cluster,
      session,
      driver,
      dataDir: ctx.paths.data,
      to: opts.to,
      settle,
      // --rehearse changes nothing but the clone it makes
      dryRun: Boolean(opts.dryRun) || Boolean(opts.rehearse),
      timeouts: t,
      snapshotVia: opts.snapshotVia as 'auto',
      etcdctl: opts.etcdctl,
      exec: await ctx.exec(),
      signal: ctx.abort.signal,
      now: ctx.now,
      reporter: reporter(ctx),
      rollbackCommand,
      onFailure,
      noBackup,
      // (the rehearsal's own run: its clone is copied from the cluster, which is its way back)
      ...(opts.rehearsalClone ? { noSnapshot: true } : {}),
      keepBackups: Boolean(opts.keepBackups),
      offsite,
      defrag: Boolean(opts.defrag),
      confirm: (c: Asked) => confirmUpgrade(ctx, c),
      debug: ctx.debugSink,
    };
    {
      const [{ runUpgradeOrLadder }, { releaseDir }, rehearsal] = await Promise.all([
        import('../../kv/ladder/ladder.js'),
        import('../../kv/release/release.js'),
        import('./lib/rehearsal.js'),
      ]);
      // a hop without --target-bin takes the release `kv release get` keeps in its cache, if any
      const cached = (version: string) => releaseDir(version, { data: ctx.paths.data });
      // Inside a clone (the rehearsal's own run): its members up and its load on, then the same run.
      const clone = opts.rehearsalClone ? await rehearsal.cloneRun(ctx, cluster, driver, session) : undefined;
      // (a command driver's members looked at for a clone: each here, its settings per version known)
      if (!clone) await rehearsal.lookForClone(driver, cluster.members);
      const rehearse = clone ? undefined : rehearsal.rehearsalPort(ctx, opts, ignoreChecks, driver, common.exec, selector);
      const r = await runUpgradeOrLadder({
        ...common,
        ...(clone ? { inClone: true, driver: clone.driver } : {}),
        ...(rehearse ? { rehearse } : {}),
        ...(opts.rehearse ? { rehearseOnly: true } : {}),
        rehearsalValidMs: duration(opts.rehearsalValid, '--rehearsal-valid', 12 * 3600_000),
        rehearsalMaxCopy: await sizeOf(opts.rehearsalMaxCopy, '--rehearsal-max-copy'),
        targetBins,
        strict: Boolean(opts.strict),
        releaseDir: cached,
        fixV2store: opts.fixV2store !== false,
        trialTimeoutS,
        ignoreChecks,
        ...(skipped ? { skipTrial: skipped } : {}),
        ...(opts.allowSameVersion ? { sameVersion: true } : {}),
      }).finally(() => clone?.stop());
      // (the clone's load read back: what the rehearsal's verdict counts)
      cloneLoad = await clone?.stop();
      if ('kind' in r) {
        const out = withChanges(renderLadder(r, ctx, opts.rehearse ? PLANNED_ONLY.rehearse : PLANNED_ONLY.dry), opts, changesOf(r));
        if (cloneLoad) out.data = { ...(out.data as object), rehearsal: cloneLoad };
        if (r.status !== 'done' && r.status !== 'halted') return out;
        const { backupsOfRuns, ladderRunIds } = await import('./lib/upgrade-backups.js');
        const { ids, steps, fates, copies, snaps } = await ladderRunIds(r);
        const b = await backupsOfRuns(ctx, cluster.key, { ids, steps, fates, copies, snaps });
        out.text = `${out.text}\n${b.line}`;
        out.data = {
          ...r,
          backups: b.doc,
          ...(reportFile ? { report: await writeReport(journalPath(ctx.paths.data, cluster.key)) } : {}),
          ...(cloneLoad ? { rehearsal: cloneLoad } : {}),
        };
        return out;
      }
      report = r.single;
      checks = r.checks;
    }
  } catch (err) {
    // Interrupted at a safe point: the journal says how far it got, and so does the report.
    if (reportFile && err instanceof InterruptedError) {
      await writeReport(journalPath(ctx.paths.data, cluster.key)).catch((e: Error) => ctx.io.warn(`--report: not written: ${e.message}`));
    }
    throw err;
  }
  const { CommandDriver } = await import('../../kv/drivers/command.js');
  // the members the run would stop and start, with the values the run passes ({bin}: the target's directory)
  const moving = new Set(report.plan.filter((m) => m.action !== 'skip').map((m) => m.name));
  const commands =
    report.status === 'planned' && driver instanceof CommandDriver
      ? moving.size
        ? driver.preview(
            cluster.members.filter((m) => moving.has(m.name)),
            { version: opts.to, ...(report.targetBin ? { binDir: report.targetBin } : {}) },
          )
        : `nothing to do: every member already runs ${report.target}; no command would run`
      : undefined;
  const out = withChanges(render(report, ctx, checks, commands, opts.rehearse ? PLANNED_ONLY.rehearse : PLANNED_ONLY.dry), opts, changesOf(report));
  if ((report.status === 'done' || report.status === 'halted') && report.run) {
    const { backupsOfRuns } = await import('./lib/upgrade-backups.js');
    const b = await backupsOfRuns(ctx, cluster.key, {
      ids: [report.run],
      steps: report.steps,
      fates: report.copies,
      copies: report.dataCopies,
      snaps: report.snapshots,
    });
    out.text = `${out.text ?? ''}\n${b.line}`;
    out.data = { ...(out.data as object), backups: b.doc };
  }
  if (cloneLoad) out.data = { ...(out.data as object), rehearsal: cloneLoad };
  if (reportFile && report.journal) out.data = { ...(out.data as object), report: await writeReport(report.journal) };
  else if (reportFile) ctx.io.warn(`--report: nothing ran, so no report was written to ${reportFile}`);
  return out;
}

/** The hops (a ladder) or members (one hop) a plan upgrades, or a run upgraded: --exit-code's changes. */
function changesOf(r: UpgradeReport | LadderReport): number {
  if ('kind' in r) return r.status === 'planned' || r.status === 'done' ? r.hops.length : 0;
  if (r.status === 'planned') return r.plan.filter((m) => m.action !== 'skip').length;
  return r.status === 'done' ? r.steps.length : 0;
}

/** --exit-code: 6 when the plan has changes, unless the result already says something else (halted, declined). */
function withChanges(out: CommandResult, opts: { exitCode?: boolean }, changes: number): CommandResult {
  return out.exitCode === undefined ? { ...out, ...changesExit(opts, changes) } : out;
}

/** What the run asks about: the plan (already on stderr), its target, warnings and members. */
interface Asked {
  target: string;
  planText: string;
  warnings: string[];
  members: number;
  resuming: boolean;
}

/** What the question names: the members that will be stopped, and the plan's warnings; the plan is shown again where the question is asked, when that is not stderr. */
function what(c: Asked): Destructive {
  const to = c.target;
  const action = c.resuming
    ? `resume the upgrade to ${to} (members are stopped and restarted one at a time)`
    : `upgrade the cluster to ${to}: stop and restart ${c.members} member${c.members === 1 ? '' : 's'}, one at a time`;
  return { action, items: c.warnings, shown: [c.planText, ...warningLines(c.warnings)].join('\n') };
}

/** Before the first stop: asks on a terminal (default no), --yes goes ahead, no terminal and no --yes refuses (exit 2). */
async function confirmUpgrade(ctx: Context, c: Asked): Promise<boolean> {
  try {
    return (await confirmDestructive(ctx, what(c))) === 'proceed';
  } catch (err) {
    if (err instanceof UsageError && err.code === 'confirmation_required') {
      throw new UsageError(`kv upgrade needs confirmation before it stops a member, and ${whyNoPrompt(ctx)}`, {
        code: 'confirmation_required',
        field: '--yes',
        hint: `pass --yes to upgrade without a prompt, or --dry-run to see the plan only; nothing was changed${c.warnings.length ? ` (${c.warnings.join('; ')})` : ''}`,
      });
    }
    throw err;
  }
}

/** The last line of a plan that ran nothing: a dry run's, or --rehearse's (its clone removed). */
const PLANNED_ONLY = { dry: '(--dry-run: nothing was changed)', rehearse: '(--rehearse: the clone is removed; nothing was changed on the cluster)' };

function render(r: UpgradeReport, ctx: Context, checks: CheckRow[] = [], commands?: string, last = PLANNED_ONLY.dry): CommandResult {
  const warned = warningLines(r.warnings).join('\n');
  // (the plan text holds the summary and each check once; --json keeps every row)
  if (r.status === 'planned')
    return {
      data: checks.length ? { ...r, checks } : r,
      text: `${r.planText}${warned ? `\n${warned}` : ''}${commands ? `\n${commands}` : ''}\n${last}`,
    };
  if (r.status === 'declined') return { ...notDone('declined', { action: `upgrade the cluster to ${r.target}` }), data: r };
  if (r.status === 'nothing-to-do') return { data: r, text: '', message: `every member and the cluster already run ${r.target}: nothing to do` };
  const lines = r.steps.map((s) =>
    `${s.status.padEnd(8)} ${s.id.padEnd(34)} ${s.ms === undefined ? '' : fmtMs(s.ms).padStart(8)}  ${s.detail ?? s.error ?? ''}`.trimEnd(),
  );
  const summary = `total ${fmtMs(r.totals.ms)}, of which the cluster's own waits ${fmtMs(r.totals.imposedMs)}`;
  if (r.status === 'halted') {
    ctx.io.err(`${ctx.io.colorErr.red('X')} upgrade halted at ${r.halt!.step}: ${r.halt!.reason}`);
    ctx.io.err('  The other members were not touched; the cluster may be mixed and can still go back.');
    ctx.io.err(`  Roll back with:  ${r.halt!.rollback}`);
    ctx.io.err(`  Or fix the cause and resume with the same command (journal: ${r.journal}).`);
    return { data: r, text: lines.join('\n'), exitCode: 3 };
  }
  return { data: r, text: `${lines.join('\n')}\n${summary}`, message: `cluster upgraded to ${r.target}: every member healthy` };
}

/** The ladder's result: the plan (--dry-run), or hop by hop what ran; halted: exit 3 with the way on. */
function renderLadder(r: LadderReport, ctx: Context, last = PLANNED_ONLY.dry): CommandResult {
  if (r.status === 'planned') return { data: r, text: `${r.planText}\n${last}` };
  if (r.status === 'declined') return { ...notDone('declined', { action: `upgrade the cluster to ${r.to}` }), data: r };
  const lines: string[] = [];
  r.hops.forEach((h, i) => {
    const ran = h.report;
    const ms = ran ? fmtMs(ran.totals.ms) : '';
    lines.push(
      `hop ${i + 1}/${r.hops.length} ${h.from} → ${h.to}${h.patch ? ' (patch)' : ''}: ${h.status}${ms ? ` (${ms})` : ''}${h.journal ? `  journal ${h.journal}` : ''}`,
    );
  });
  if (r.status === 'halted') {
    ctx.io.err(`${ctx.io.colorErr.red('X')} upgrade ladder halted at hop ${r.halt!.hop}: ${r.halt!.reason}`);
    if (r.halt!.rollback) ctx.io.err(`  Roll back this hop with:  ${r.halt!.rollback}`);
    ctx.io.err(`  Or fix the cause and resume with the same command (ladder: ${r.ladderFile}).`);
    return { data: r, text: lines.join('\n'), exitCode: 3 };
  }
  return { data: r, text: lines.join('\n'), message: `cluster upgraded to ${r.to} in ${r.hops.length} hops: every member healthy` };
}

/** The --backup-to store opened and probed; each upload streamed, verified on the store, its manifest written last. */
async function offsiteUploader(url: string, settings: S3Settings, ctx: Context): Promise<OffsiteUploader> {
  const { store, target } = await openOffsite(url, '--backup-to', settings);
  return {
    url,
    upload: async (file, name, facts) => {
      const { manifest } = await store.uploadSnapshot(target, name, file, facts, ctx.abort.signal);
      return `s3://${target.bucket}/${manifest.key}`;
    },
  };
}

/** A size flag (`1GiB`, `500MB`, bytes): a usage error naming the flag when it is not one. */
async function sizeOf(text: string | undefined, flag: string): Promise<number | undefined> {
  if (text === undefined) return undefined;
  const { parseSize } = await import('@opsctl/shared/size.js');
  const n = parseSize(text);
  if (n === undefined)
    throw new UsageError(`${flag}: "${text}" is not a size`, { field: flag, hint: `give a size such as 1GiB or 500MiB (${flag} 2GiB is the default)` });
  return n;
}
