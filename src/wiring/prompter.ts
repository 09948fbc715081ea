import type { Context } from '../context.js';
import { InterruptedError, UsageError } from '../core/errors.js';
import { whyNoPrompt } from '../core/no-prompt.js';
import type { Prompter } from '../core/prompter.js';

/** Where an @inquirer prompt reads and writes, and what cancels it. */
interface PromptContext {
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
  signal?: AbortSignal;
}

/**
 * Prompts on the command's stderr, only when it may (a terminal, no CI, no --no-input); otherwise
 * the explicit default or an error naming the flag that answers. @inquirer loads on the first question.
 */
export function terminalPrompter(ctx: Context): Prompter {
  const { io } = ctx;
  const canPrompt = io.canPrompt(ctx.noInput);
  const yes = Boolean(ctx.globals.yes);
  // A prompt reads keys in raw mode, so Ctrl-C reaches it as a key, not a signal: @inquirer then
  // rejects with ExitPromptError (a SIGTERM aborts it through the signal). Both are an interrupt: 130.
  const ask = async <C, T>(prompt: (config: C, context?: PromptContext) => Promise<T>, config: C): Promise<T> => {
    io.endProgress();
    try {
      return await prompt(config, { input: io.stdin, output: io.stderr, signal: ctx.abort.signal });
    } catch (err) {
      const name = (err as Error)?.name;
      if (name === 'ExitPromptError' || name === 'AbortPromptError') throw new InterruptedError('interrupted');
      throw err;
    }
  };
  return {
    confirm: async (message, opts = {}) => {
      if (yes) return true;
      if (!canPrompt) {
        if (opts.default !== undefined && !opts.flag) return opts.default;
        throw new UsageError(`${message.replace(/\?$/, '')}: confirmation needed, and ${whyNoPrompt(ctx)}`, {
          code: 'confirmation_required',
          hint: `pass ${opts.flag ?? '--yes'} to confirm without a prompt`,
        });
      }
      const { confirm } = await import('@inquirer/prompts');
      return ask(confirm, { message: io.safeErr(message), default: opts.default ?? false });
    },
    input: async (message, opts) => {
      if (!canPrompt) {
        if (opts.default !== undefined) return opts.default;
        throw new UsageError(`${message}: a value is needed, and ${whyNoPrompt(ctx)}`, { hint: `pass ${opts.flag}` });
      }
      const { input } = await import('@inquirer/prompts');
      return ask(input, { message: io.safeErr(message), default: opts.default });
    },
    password: async (message, opts) => {
      if (!canPrompt) throw new UsageError(`${message}: ${whyNoPrompt(ctx)}`, { field: opts.field, hint: opts.hint });
      const { password } = await import('@inquirer/prompts');
      return ask(password, { message: io.safeErr(message), mask: true });
    },
    select: async (message, opts) => {
      if (!canPrompt) throw new UsageError(`${message}: ${whyNoPrompt(ctx)}`, { field: opts.flag, hint: `pass ${opts.flag}` });
      const { select } = await import('@inquirer/prompts');
      return ask(select, { message: io.safeErr(message), choices: opts.choices.map((c) => ({ ...c, name: io.safeErr(c.name) })), default: opts.default });
    },
  };
}
