import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { removeSandboxBackups } from '../../kv/backups.js';
import { liveMembers, loadSandbox, localDriver, removeSandbox } from '../../kv/sandbox.js';
import { waitFor } from '../../kv/wait.js';

export interface SandboxDownOptions {
  keep?: boolean;
}

/** `kv sandbox down`: stops the members this sandbox started (by PID), then removes its files. */
export async function run(opts: SandboxDownOptions, ctx: Context): Promise<CommandResult> {
  const spec = loadSandbox(ctx.paths.data);
  if (!spec) return { text: '', message: 'no kv sandbox: nothing to do' };
  const driver = localDriver(ctx.paths.data, spec, await ctx.exec(), ctx.env);
  const live = liveMembers(spec);
  for (const m of live) await driver.stop(m);
  for (const m of live) {
    await waitFor(async () => ((await driver.isRunning(m)) ? undefined : true), { timeoutMs: 15_000, pollMs: 50, what: `${m.name} exit` }).catch(async () => {
      await driver.kill(m);
    });
  }
  if (!opts.keep) await removeSandboxBackups(ctx.paths.data, (line) => ctx.io.info(line));
  if (!opts.keep) await removeSandbox(ctx.paths.data);
  return {
    data: { stopped: live.map((m) => m.name), removed: !opts.keep ? spec.dir : null },
    text: '',
    message: `sandbox down: stopped ${live.length} member(s)${opts.keep ? '' : `, removed ${spec.dir}`}`,
  };
}
