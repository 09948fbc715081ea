import type { Command } from 'commander';
import type { Context } from '../context.js';
import type { CommandResult } from '../core/output.js';
import { ExitCode } from '../core/exit-codes.js';

/** How every destructive verb's description ends (the one rule of src/core/confirm.ts). */
export const CONFIRM_HELP = 'asks on a terminal; needs --yes without one; --dry-run shows it';

/**
 * `--exit-code` of every apply and plan (terraform's -detailed-exitcode, `git diff --exit-code`): exit
 * 6 (`changes`) when the plan has changes, 0 when there is nothing to do, 1 on an error. opsctl's 2 is
 * already usage, so 6, a code of its own (`opsctl help exit-codes`).
 */
export const EXIT_CODE_FLAG = {
  type: 'boolean',
  help: 'exit 6 when the plan has changes (pending with --dry-run, made without), 0 when there is nothing to do',
} as const;

/** The result's exit code under --exit-code: `changes` when the plan had any. */
export function changesExit(opts: { exitCode?: boolean }, changes: number): { exitCode?: number } {
  return opts.exitCode && changes > 0 ? { exitCode: ExitCode.changes } : {};
}

/** What a verb module exports: `run(opts, ctx)` returning data for the renderer. */
export interface VerbModule<O> {
  /** `cmd` is the command that ran (the few verbs that read the command tree, help and completion, use it). */
  run(opts: O, ctx: Context, cmd: Command): Promise<CommandResult | void>;
}

/**
 * commander's option values as a verb sees them: a flag named like one of the verb's options holds
 * that option's value (the command declares a required option with requiredOption or a default);
 * any other flag is unknown until the mapper narrows it. This is the one place commander's untyped
 * values meet the verbs' option types.
 */
export type Flags<O> = Readonly<O> & Readonly<Record<string, unknown>>;

/**
 * One positional value as commander hands it to an action: `<x>` a string (commander has already
 * refused the command without it), `[x]` a string or undefined, `<x...>` and `[x...]` an array of strings
 * (empty when none were given).
 */
export type Positional = string | undefined | string[];

/**
 * Turns commander's positional values (`args`, one per declared argument, in order) and flags into a
 * verb's options. A mapper that reads `args` names their types as a tuple mirroring the command's
 * declaration, e.g. `([label, field]: [string, string | undefined], o) => …` for `<label> [field]`;
 * one that does not gets `string[]`.
 */
export type ToOptions<O, A extends Positional[] = string[]> = (args: A, flags: Flags<O>, cmd: Command) => O;

/**
 * A commander action that imports its verb module only when the command runs (netlify-style lazy
 * actions), turns commander's arguments into the verb's options, runs it and renders the result.
 * Without `toOptions` the flags are the verb's options as they are (their names are its fields).
 */
export function lazyAction<O, A extends Positional[] = string[]>(ctx: Context, load: () => Promise<VerbModule<O>>, toOptions?: ToOptions<NoInfer<O>, A>) {
  const build: ToOptions<O, A> = toOptions ?? ((_args, flags) => flags);
  return async (...raw: unknown[]): Promise<void> => {
    const cmd = raw[raw.length - 1] as Command;
    const flags = raw[raw.length - 2] as Flags<O>;
    // the mapper's tuple: commander passes one value per declared argument and has checked the required ones
    const args = raw.slice(0, -2) as A;
    // a --jq expression is compiled before the verb runs: a typo sends nothing
    if (ctx.globals.jq !== undefined) await (await import('../core/output.js')).checkJq(ctx.globals.jq);
    const mod = await load();
    const result = await mod.run(build(args, flags, cmd), ctx, cmd);
    if (result) {
      const { render, renderJq } = await import('../core/output.js');
      const jq = ctx.globals.jq;
      if (jq !== undefined) await renderJq(ctx.io, result, { json: ctx.globals.json, jq });
      else render(ctx.io, result, { json: ctx.globals.json });
      if (result.exitCode) ctx.exitCode = result.exitCode;
    }
  };
}

const EXAMPLES = new WeakMap<Command, string[]>();

/** The examples a command's --help shows (for the generated reference and man pages). */
export function examplesOf(cmd: Command): readonly string[] {
  return EXAMPLES.get(cmd) ?? [];
}

/** Adds an "Examples:" block to a command's --help. */
export function examples(cmd: Command, ...lines: string[]): Command {
  EXAMPLES.set(cmd, [...(EXAMPLES.get(cmd) ?? []), ...lines]);
  return cmd.addHelpText('after', `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`);
}
