import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { completionScript, type Shell } from '../../completion/tree.js';
import type { CommandResult } from '../../core/output.js';

export async function run(opts: { shell: Shell; program: Command }, _ctx: Context): Promise<CommandResult> {
  return { text: completionScript(opts.shell, opts.program).trimEnd() };
}
