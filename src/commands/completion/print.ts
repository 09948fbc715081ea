import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { completionScript, SHELLS } from '../../completion/tree.js';
import { UsageError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';

export function run(opts: { shell: string; program: Command; dynamic?: boolean }, _ctx: Context): Promise<CommandResult> {
  // commander's choices() already refuses another shell; this narrows the string for the compiler
  const shell = SHELLS.find((s) => s === opts.shell);
  if (!shell) return Promise.reject(new UsageError(`unknown shell "${opts.shell}"`, { hint: `use one of ${SHELLS.join(', ')}` }));
  return Promise.resolve({ text: completionScript(shell, opts.program, opts.dynamic).trimEnd() });
}
