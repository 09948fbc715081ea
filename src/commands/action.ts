import type { Command } from 'commander';
import type { Context } from '../context.js';
import type { CommandResult } from '../core/output.js';

/** What a verb module exports: `run(opts, ctx)` returning data for the renderer. */
/** How every destructive verb's description ends (the one rule of src/core/confirm.ts). */
export const CONFIRM_HELP = 'asks on a terminal; needs --yes without one; --dry-run shows it';

export interface VerbModule<O> {
  run(opts: O, ctx: Context): Promise<CommandResult | void>;
}

/**
 * A commander action that imports its verb module only when the command runs (netlify-style lazy
 * actions), turns commander's arguments into the verb's options, runs it and renders the result.
 */
export function lazyAction<O>(
  ctx: Context,
  load: () => Promise<VerbModule<O>>,
  toOptions: (args: string[], opts: Record<string, any>, cmd: Command) => O,
) {
  return async (...raw: unknown[]): Promise<void> => {
    const cmd = raw[raw.length - 1] as Command;
    const opts = raw[raw.length - 2] as Record<string, any>;
    const args = raw.slice(0, -2) as string[];
    // a --jq expression is compiled before the verb runs: a typo sends nothing
    if (ctx.globals.jq !== undefined) await (await import('../core/output.js')).checkJq(ctx.globals.jq);
    const mod = await load();
    const result = await mod.run(toOptions(args, opts, cmd), ctx);
    if (result) {
      const { render, renderJq } = await import('../core/output.js');
      const jq = ctx.globals.jq;
      if (jq !== undefined) await renderJq(ctx.io, result, { json: ctx.globals.json, jq });
      else render(ctx.io, result, { json: ctx.globals.json });
      if (result.exitCode) ctx.exitCode = result.exitCode;
    }
  };
}

/** Adds an "Examples:" block to a command's --help. */
export function examples(cmd: Command, ...lines: string[]): Command {
  return cmd.addHelpText('after', `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`);
}
