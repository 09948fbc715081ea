import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { UsageError } from '../../core/errors.js';
import { runRollback } from '../../kv/rollback.js';
import { reporter, resolveCluster, timeouts, type ClusterFlags, type TimeoutFlags } from './shared.js';

export interface RollbackOptions extends ClusterFlags, TimeoutFlags {}

/** `kv rollback`: upgraded members back on their old version while the cluster version has not moved. */
export async function run(opts: RollbackOptions, ctx: Context): Promise<CommandResult> {
  const { cluster, driver, session } = await resolveCluster(ctx, opts);
  if (!driver) throw new UsageError('no way to stop and start members', { hint: 'use the sandbox, a cluster file with a driver, or --stop-cmd/--start-cmd/--running-cmd' });
  ctx.handlesInterrupt = true; // Ctrl-C stops between members, never between a stop and its start
  const r = await runRollback({ cluster, session, driver, dataDir: ctx.paths.data, timeouts: timeouts(opts), now: ctx.now, reporter: reporter(ctx), signal: ctx.abort.signal });
  return {
    data: r,
    text: '',
    message: r.status === 'nothing-to-do' ? 'no member runs the target version: nothing to roll back' : `rolled back ${r.members.map((m) => `${m.name} → ${m.to}`).join(', ')}; the cluster is healthy`,
  };
}
