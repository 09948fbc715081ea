import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { OpsError } from '../../core/errors.js';
import { memberProcesses } from '../../kv/drivers/local.js';
import { describeProc } from '../../kv/drivers/member-procs.js';
import { removeSandboxBackups } from '../../kv/backups/backups.js';
import { loadSandbox, localDriver, removeSandbox } from '../../kv/sandbox/sandbox.js';
import { waitFor } from '../../kv/cluster/wait.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './sandbox-down.spec.js';

export type Options = OptionsOf<typeof spec>;

/** How long a member may take to exit after SIGTERM (a busy machine, a large data dir), then after SIGKILL. */
const TERM_WAIT_MS = 60_000;
const KILL_WAIT_MS = 30_000;

/**
 * `kv sandbox down`: stops every process that is a sandbox member, found by its PID file and by its
 * data dir, config file and ports (a start cut short may have left one its PID file does not name:
 * named, then stopped), waits for each to exit, then removes the sandbox's files. Never says success
 * while a member process lives: one still alive after SIGTERM and SIGKILL fails (exit 1) with the
 * files kept, so a later run finds it again.
 */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  const spec = loadSandbox(ctx.paths.data);
  if (!spec) return { text: '', message: 'no kv sandbox: nothing to do' };
  const driver = localDriver(ctx.paths.data, spec, await ctx.exec(), ctx.env, (t) => ctx.io.warn(t), ctx.debugSink);
  const live = spec.members.filter((m) => {
    const found = memberProcesses(m);
    for (const p of found.foreign) ctx.io.warn(`${m.name}: ${describeProc(p)} ${p.why.join('; ')} but is not ${m.name}: left alone`);
    return found.member.length > 0;
  });
  for (const m of live) await driver.stop(m);
  const alive: string[] = [];
  for (const m of live) {
    const gone = (timeoutMs: number, what: string) => waitFor(async () => ((await driver.isRunning(m)) ? undefined : true), { timeoutMs, pollMs: 100, what });
    try {
      await gone(TERM_WAIT_MS, `${m.name} exit`);
    } catch {
      ctx.io.warn(`${m.name} did not exit within ${TERM_WAIT_MS / 1000} s of SIGTERM: sending SIGKILL`);
      await driver.kill(m);
      await gone(KILL_WAIT_MS, `${m.name} exit after SIGKILL`).catch(() =>
        alive.push(...memberProcesses(m).member.map((p) => `${m.name}: ${describeProc(p)}`)),
      );
    }
  }
  if (alive.length) {
    throw new OpsError(`sandbox down failed: member processes still running after SIGTERM and SIGKILL: ${alive.join(', ')}`, 1, {
      code: 'sandbox_member_alive',
      hint: `the sandbox files under ${spec.dir} were kept; find out why the process does not exit (ps -o pid,stat,cmd -p PID), then run opsctl kv sandbox down again`,
    });
  }
  const backups = opts.keep ? undefined : await removeSandboxBackups(ctx.paths.data, (line) => ctx.io.info(line));
  if (!opts.keep) await removeSandbox(ctx.paths.data);
  return {
    data: { stopped: live.map((m) => m.name), removed: !opts.keep ? spec.dir : null, backupsRemoved: backups ?? null },
    text: '',
    message: `sandbox down: stopped ${live.length} member(s)${opts.keep ? '' : `, removed ${spec.dir}`}`,
  };
}
