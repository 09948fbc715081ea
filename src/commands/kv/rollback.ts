import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { UsageError } from '../../core/errors.js';
import { runRollback } from '../../kv/restore/rollback.js';
import { resolveCluster, shellLine, timeouts } from './lib/shared.js';
import { clusterPorts } from './lib/rolling-options.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './rollback.spec.js';

export type Options = OptionsOf<typeof spec>;

/** `kv rollback`: upgraded members back on their old version while the cluster version has not moved. */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  const found = await resolveCluster(ctx, opts);
  const { driver, selector } = found;
  if (!driver && !opts.dryRun)
    throw new UsageError('no way to stop and start members', {
      hint: 'use the sandbox, a cluster file with a driver, or --stop-cmd/--start-cmd/--running-cmd',
    });
  ctx.handlesInterrupt = true; // Ctrl-C stops between members, never between a stop and its start
  const restoreCommand = (file: string, v: string) => shellLine(['opsctl', 'kv', 'restore', '--snapshot', file, '--to-version', v, ...selector]);
  const lookCommand = () => shellLine(['opsctl', 'kv', 'endpoint', 'health', ...selector]);
  const r = await runRollback({
    ...clusterPorts(ctx, found),
    driver: driver!,
    dryRun: Boolean(opts.dryRun),
    restoreCommand,
    lookCommand,
    timeouts: timeouts(opts),
  });
  if (r.status === 'planned' || (opts.dryRun && r.status === 'nothing-to-do')) {
    const lines = (r.plan ?? []).map((p, i) => `${i + 1}. ${p.name}: stop, start on ${p.to}, wait until it and the cluster are healthy (${p.why})`);
    const left = (r.left ?? []).map((x) => `- ${x.todo}`);
    return {
      data: r,
      text: `${
        lines.length ? `kv rollback would, one member at a time:\n${lines.join('\n')}` : 'no member runs the target version: nothing to roll back'
      }${left.length ? `\nleft for you:\n${left.join('\n')}\n` : lines.length ? '\n' : ' '}(--dry-run: nothing was changed)`,
    };
  }
  if (r.left?.length) {
    const back = r.members.length ? `gave back ${r.members.map((m) => `${m.name} → ${m.to}`).join(', ')}` : 'nothing of the upgrade to give back';
    return {
      data: r,
      text: '',
      message: `${back}; the cluster is not whole: ${r.left.map((x) => x.todo).join('; ')}`,
      exitCode: 3,
    };
  }
  return {
    data: r,
    text: '',
    message:
      r.status === 'nothing-to-do'
        ? 'no member runs the target version: nothing to roll back'
        : `rolled back ${r.members.map((m) => `${m.name} → ${m.to}`).join(', ')}; the cluster is healthy`,
  };
}
