/**
 * `kv upgrade`'s flags turned into the options its domain run takes (`runUpgradeOrLadder`): every flag checked
 * here, before anything changes, a bad one refused with a usage error naming it and the fix.
 */
import type { Context } from '../../../context.js';
import { confirmDestructive, type Destructive } from '../../../core/confirm.js';
import { UsageError } from '../../../core/errors.js';
import { whyNoPrompt } from '../../../core/no-prompt.js';
import type { OffsiteUploader } from '../../../kv/upgrade/options.js';
import type { S3Settings } from '../../../kv/offsite/target.js';
import { capabilitiesOf } from '../../../kv/drivers/driver.js';
import type { LadderOptions, SkipTrial } from '../../../kv/ladder/record.js';
import { ruleIds } from '../../../kv/rules/index.js';
import { PROOF_RULES } from '../../../kv/rules/trial.js';
import { warningLines } from '../../../kv/rules/summary.js';
import { LADDER_MINORS, ladderSpan, ladderWords } from '@opsctl/shared/etcd-ladder.js';
import { openOffsite, s3Settings } from './offsite.js';
import { parseTargetBins, rollingPolicy, rollingPorts, type PolicyFlags } from './rolling-options.js';
import { duration, requireBackupTemplate, resolveCluster, type ClusterFlags } from './shared.js';

const TARGETS_HELP = `${ladderSpan()} (one hop per minor from the cluster's version: ${ladderWords()}); with --allow-same-version a rolling restart on ${ladderSpan(LADDER_MINORS)}`;

/** The flags `upgradeOptions` reads: kv upgrade's (upgrade.spec.ts, its verb's own: a file of lib/ does not import it). */
type UpgradeFlags = ClusterFlags &
  PolicyFlags &
  Parameters<typeof s3Settings>[0] & {
    to: string;
    dryRun?: boolean;
    report?: string;
    targetBin?: string[] | string;
    ignoreCheck?: string[] | string;
    skipTrial?: string[] | string;
    skipReason?: string;
    trialTimeout?: string;
    rehearse?: boolean;
    rehearsalValid?: string;
    rehearsalMaxCopy?: string;
    rehearsalCopyKeys?: boolean;
    rehearsalClone?: boolean;
    backupTo?: string;
    defrag?: boolean;
    strict?: boolean;
    fixV2store?: boolean;
    allowSameVersion?: boolean;
  };

/**
 * The run's options from `kv upgrade`'s flags: each flag checked before the cluster is looked for, then what needs
 * the cluster (the members --skip-trial names, the driver's limits, the backup template, the --backup-to store).
 * Besides: the flags that find the cluster (the rehearsal's run finds the same one) and the --report file.
 */
export async function upgradeOptions(
  opts: UpgradeFlags,
  ctx: Context,
): Promise<{ options: LadderOptions & { ignoreChecks: string[] }; selector: string[]; reportFile?: string }> {
  if (!/^\d+\.\d+$/.test(opts.to))
    throw new UsageError(`--to: "${opts.to}" is not a minor version`, { field: '--to', hint: `write it as 3.3 (supported targets: ${TARGETS_HELP})` });
  if (!LADDER_MINORS.includes(opts.to)) {
    throw new UsageError(`--to: ${opts.to} is not a supported target`, { field: '--to', hint: `supported targets: ${TARGETS_HELP}` });
  }
  const policy = rollingPolicy(opts, 'its old binary');
  if (opts.report && opts.dryRun)
    throw new UsageError('--report: a dry run changes nothing and records no run to report', {
      field: '--report',
      hint: 'drop --report to see the plan, or drop --dry-run to upgrade and write the report',
    });
  const reportFile = opts.report ? (await import('./report-file.js')).reportPath(ctx, opts.report) : undefined;
  const targetBins = parseTargetBins(opts.targetBin);
  const ignoreChecks = checkIds(opts.ignoreCheck);
  const skipped = skipTrial(opts.skipTrial, opts.skipReason);
  const trialTimeoutS = duration(opts.trialTimeout, '--trial-timeout', 30_000) / 1000;
  const rehearsalValidMs = duration(opts.rehearsalValid, '--rehearsal-valid', 12 * 3600_000);
  const rehearsalMaxCopy = await sizeOf(opts.rehearsalMaxCopy, '--rehearsal-max-copy');
  const found = await resolveCluster(ctx, opts);
  const { cluster, driver, selector } = found;
  checkSkipped(skipped, cluster.members);
  const can = capabilitiesOf(driver);
  if (Object.keys(targetBins).length && can.releases) {
    throw new UsageError(`--target-bin: the sandbox runs ${can.what} members`, {
      field: '--target-bin',
      hint: `drop --target-bin (${can.what} members switch version themselves), or start the sandbox with --etcd-bin DIR`,
    });
  }
  // Never a silent "skipped": the seed says back up every data dir (a snapshot holds only v3 data).
  requireBackupTemplate(driver, { noBackup: policy.noBackup, example: '--backup-cmd "ssh {host} sudo cp -a /var/lib/etcd /var/lib/etcd.bak-{run}", ' });
  // Off-host: the store proved writable (a probe object written and deleted) before the plan, so a
  // bucket the identity may not write refuses the run before any member stops, --dry-run included.
  const offsite = opts.backupTo ? await offsiteUploader(opts.backupTo, s3Settings(opts), ctx) : undefined;
  const { releaseDir } = await import('../../../kv/release/release.js');
  const options = {
    ...(await rollingPorts(ctx, found)),
    ...policy,
    to: opts.to,
    // --rehearse changes nothing but the clone it makes
    dryRun: Boolean(opts.dryRun) || Boolean(opts.rehearse),
    // (the rehearsal's own run: its clone is copied from the cluster, which is its way back)
    ...(opts.rehearsalClone ? { noSnapshot: true } : {}),
    offsite,
    defrag: Boolean(opts.defrag),
    confirm: (c: Asked) => confirmUpgrade(ctx, c),
    ...(opts.rehearse ? { rehearseOnly: true } : {}),
    rehearsalValidMs,
    rehearsalMaxCopy,
    targetBins,
    strict: Boolean(opts.strict),
    // a hop without --target-bin takes the release `kv release get` keeps in its cache, if any
    releaseDir: (version: string) => releaseDir(version, { data: ctx.paths.data }),
    fixV2store: opts.fixV2store !== false,
    trialTimeoutS,
    ignoreChecks,
    ...(skipped ? { skipTrial: skipped } : {}),
    ...(opts.allowSameVersion ? { sameVersion: true } : {}),
  };
  return { options, selector, ...(reportFile ? { reportFile } : {}) };
}

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

/** A size flag (`1GiB`, `500MB`, bytes): a usage error naming the flag when it is not one. */
async function sizeOf(text: string | undefined, flag: string): Promise<number | undefined> {
  if (text === undefined) return undefined;
  // (0: none at all, as --rehearsal-valid 0 is never reused)
  if (/^\s*0\s*$/.test(text)) return 0;
  const { parseSize } = await import('@opsctl/shared/size.js');
  const n = parseSize(text);
  if (n === undefined)
    throw new UsageError(`${flag}: "${text}" is not a size`, { field: flag, hint: `give a size such as 1GiB or 500MiB (${flag} 2GiB is the default)` });
  return n;
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
