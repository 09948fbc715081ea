import type { Command } from 'commander';
import { rootOf, type OptionsOf } from '../spec.js';
import type { spec } from './completion.spec.js';
import type { Context } from '../../context.js';
import { completionScript, SHELLS } from '../../completion/tree.js';
import { UsageError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';

export type Options = OptionsOf<typeof spec>;

export function run(opts: Options, _ctx: Context, cmd: Command): Promise<CommandResult> {
  // commander's choices() already refuses another shell; this narrows the string for the compiler
  const shell = SHELLS.find((s) => s === opts.shell);
  if (!shell) return Promise.reject(new UsageError(`unknown shell "${opts.shell}"`, { hint: `use one of ${SHELLS.join(', ')}` }));
  return Promise.resolve({ text: completionScript(shell, rootOf(cmd), { dynamic: opts.dynamic }).trimEnd() });
}
