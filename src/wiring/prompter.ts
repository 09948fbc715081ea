import type { Context } from '../context.js';
import { InterruptedError, UsageError } from '../core/errors.js';
import { neutralizeControls } from '../core/io.js';
import { whyNoPrompt } from '../core/no-prompt.js';
import type { Prompter } from '../core/prompter.js';

/** Where an @inquirer prompt reads and writes, and what cancels it. */
interface PromptContext {
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
  signal?: AbortSignal;
}

/** The terminal a question is written to: stderr, or /dev/tty (opened for the question, closed after it) when stderr is redirected. */
interface Asking {
  output: NodeJS.WritableStream;
  /** Not stderr: what stderr already showed is shown here too, and the answer is noted on stderr. */
  elsewhere: boolean;
  close(): void;
}

/**
 * The controlling terminal for writing, as ssh and sudo ask on it when the standard streams are
 * redirected; undefined where there is none (no controlling terminal: setsid, a service; not Unix).
 */
function openTty(): Asking | undefined {
  const { openSync, closeSync } = process.getBuiltinModule('node:fs');
  const { WriteStream } = process.getBuiltinModule('node:tty');
  let fd: number;
  try {
    fd = openSync('/dev/tty', 'w');
  } catch {
    return undefined;
  }
  try {
    const output = new WriteStream(fd);
    return { output, elsewhere: true, close: () => output.destroy() };
  } catch {
    closeSync(fd);
    return undefined;
  }
}

/**
 * Prompts where the person is, only when it may (stdin and stdout terminals, no CI, no --no-input): on
 * stderr when it is a terminal, else on /dev/tty (`2>upgrade.log` on a terminal: the question, and the
 * plan it is about, are shown on the terminal, the answer noted in the log); otherwise the explicit
 * default or an error naming the flag that answers. @inquirer loads on the first question.
 */
export function terminalPrompter(ctx: Context): Prompter {
  const { io } = ctx;
  const canPrompt = io.canPrompt({ noInput: ctx.noInput });
  const yes = Boolean(ctx.globals.yes);
  /** Where to ask, or undefined: stderr redirected and no /dev/tty. */
  const terminal = (): Asking | undefined => (io.isStderrTTY ? { output: io.stderr, elsewhere: false, close: () => undefined } : openTty());
  // A prompt reads keys in raw mode, so Ctrl-C reaches it as a key, not a signal: @inquirer then
  // rejects with ExitPromptError (a SIGTERM aborts it through the signal). Both are an interrupt: 130.
  const ask = async <C, T>(at: Asking, prompt: (config: C, context?: PromptContext) => Promise<T>, config: C): Promise<T> => {
    io.endProgress();
    try {
      return await prompt(config, { input: io.stdin, output: at.output, signal: ctx.abort.signal });
    } catch (err) {
      const name = (err as Error)?.name;
      if (name === 'ExitPromptError' || name === 'AbortPromptError') throw new InterruptedError('interrupted');
      throw err;
    } finally {
      at.close();
    }
  };
  // Text for the terminal asked on: control characters shown, not obeyed (it may come from a server).
  const safe = (at: Asking, text: string) => (at.elsewhere ? neutralizeControls(text) : io.safeErr(text));
  const noTerminal = (message: string, flag: string, field?: string) =>
    new UsageError(`${message}: ${whyNoPrompt(ctx)}`, { ...(field ? { field } : {}), hint: `pass ${flag}` });
  return {
    confirm: async (message, opts = {}) => {
      if (yes) return true;
      const at = canPrompt ? terminal() : undefined;
      if (!at) {
        if (opts.default !== undefined && !opts.flag) return opts.default;
        throw new UsageError(`${message.replace(/\?$/, '')}: confirmation needed, and ${whyNoPrompt(ctx)}`, {
          code: 'confirmation_required',
          hint: `pass ${opts.flag ?? '--yes'} to confirm without a prompt`,
        });
      }
      if (at.elsewhere && opts.shown) at.output.write(`${neutralizeControls(opts.shown)}\n`);
      const { confirm } = await import('@inquirer/prompts');
      const answer = await ask(at, confirm, { message: safe(at, message), default: opts.default ?? false });
      if (at.elsewhere) io.err(`${io.safeErr(message)} ${answer ? 'yes' : 'no'} (answered on the terminal, /dev/tty)`);
      return answer;
    },
    input: async (message, opts) => {
      const at = canPrompt ? terminal() : undefined;
      if (!at) {
        if (opts.default !== undefined) return opts.default;
        throw new UsageError(`${message}: a value is needed, and ${whyNoPrompt(ctx)}`, { hint: `pass ${opts.flag}` });
      }
      const { input } = await import('@inquirer/prompts');
      return ask(at, input, { message: safe(at, message), default: opts.default });
    },
    password: async (message, opts) => {
      const at = canPrompt ? terminal() : undefined;
      if (!at) throw new UsageError(`${message}: ${whyNoPrompt(ctx)}`, { field: opts.field, hint: opts.hint });
      const { password } = await import('@inquirer/prompts');
      return ask(at, password, { message: safe(at, message), mask: true });
    },
    select: async (message, opts) => {
      const at = canPrompt ? terminal() : undefined;
      if (!at) throw noTerminal(message, opts.flag, opts.flag);
      const { select } = await import('@inquirer/prompts');
      return ask(at, select, {
        message: safe(at, message),
        choices: opts.choices.map((c) => ({ ...c, name: safe(at, c.name) })),
        default: opts.default,
      });
    },
  };
}
