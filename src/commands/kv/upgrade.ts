import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { InterruptedError } from '../../core/errors.js';
import { LADDER_MINORS } from '@opsctl/shared/etcd-ladder.js';
import { journalPath } from '../../kv/journal/journal.js';
import { downMemberWords } from './lib/last-words.js';
import { upgradeOptions } from './lib/upgrade-options.js';
import { renderUpgrade, writeRunReport } from './lib/upgrade-render.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './upgrade.spec.js';

/** The minors kv restore starts members on: every minor of the ladder's table (from 3.5 on restored with etcdutl). */
export const KNOWN_MINORS = LADDER_MINORS;

export type Options = OptionsOf<typeof spec>;

/**
 * `kv upgrade --to 3.3`: pre-flight (refuse with exit 1), the plan (--dry-run stops), then one
 * member at a time with a journal; halts at the first failure with exit 3 and the roll-back command;
 * Ctrl-C stops at a safe point with exit 130; a re-run resumes.
 */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  // Inside a clone, started beside the copy: the run's modules loaded while the copy is made, then the copy whole
  // (and after it, what the parent read of the same data for its plan: `judged`)
  if (opts.rehearsalClone) void import('../../kv/ladder/ladder.js').catch(() => undefined);
  const parent = opts.rehearsalClone ? await (await import('./lib/rehearsal.js')).copyWhole(ctx) : undefined;
  const { options, selector, reportFile } = await upgradeOptions(opts, ctx);
  const { cluster, driver, session } = options;
  ctx.handlesInterrupt = true;
  // a second Ctrl-C or a closed pipe while a member is down: say which, and the two ways on
  ctx.lastWords = downMemberWords(ctx, cluster.key, options.rollbackCommand);
  try {
    const [{ runUpgradeOrLadder }, rehearsal, { SnapshotShelf }] = await Promise.all([
      import('../../kv/ladder/ladder.js'),
      import('./lib/rehearsal.js'),
      import('../../kv/snapshot/shelf.js'),
    ]);
    // Inside a clone (the rehearsal's own run): its members up and its load on, then the same run.
    const clone = opts.rehearsalClone ? await rehearsal.cloneRun(ctx, cluster, driver, session) : undefined;
    // (a command driver's members looked at for a clone: each here, its settings per version known)
    if (!clone) await rehearsal.lookForClone(driver, cluster.members, { copyKeys: Boolean(opts.rehearsalCopyKeys) });
    const rehearse = clone ? undefined : rehearsal.rehearsalPort(ctx, opts, options.ignoreChecks, driver, options.exec, selector);
    // (the checks' snapshot of the leader kept for the first stop's own while nothing is committed since; what is not taken goes
    // at the end; none where no stop follows, --dry-run and --rehearse, nor in a clone, which takes no snapshot)
    const shelf = options.dryRun || clone ? undefined : new SnapshotShelf();
    const r = await runUpgradeOrLadder({
      ...options,
      ...(clone ? { inClone: true, driver: clone.driver, atClusterVersionWait: clone.atClusterVersionWait, ...(parent ? { judged: parent.judged } : {}) } : {}),
      ...(rehearse ? { rehearse } : {}),
      ...(shelf ? { shelf } : {}),
    }).finally(() => {
      shelf?.clear();
      return clone?.stop();
    });
    // (the clone's load read back: what the rehearsal's verdict counts)
    const cloneLoad = await clone?.stop();
    return await renderUpgrade(r, { ctx, flags: opts, cluster, driver, reportFile, cloneLoad });
  } catch (err) {
    // Interrupted at a safe point: the journal says how far it got, and so does the report.
    if (reportFile && err instanceof InterruptedError) {
      await writeRunReport(ctx, reportFile, journalPath(ctx.paths.data, cluster.key)).catch((e: Error) => ctx.io.warn(`--report: not written: ${e.message}`));
    }
    throw err;
  }
}
