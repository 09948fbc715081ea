import { UsageError } from './errors.js';
import { whyNoPrompt } from './no-prompt.js';
import { ExitCode } from './exit-codes.js';
import type { IOStreams } from './io.js';
import type { CommandResult } from './output.js';
import type { Prompter } from './prompter.js';

/** What the confirmation rule reads of a command: its stderr, --yes and --no-input, the environment, the prompter. */
export interface ConfirmContext {
  env: NodeJS.ProcessEnv;
  io: Pick<IOStreams, 'info' | 'isStdinTTY' | 'isStdoutTTY'> & Partial<Pick<IOStreams, 'isStderrTTY'>>;
  globals: { yes?: boolean };
  noInput: boolean;
  prompter(): Promise<Prompter>;
}

/** Something a destructive verb is about to remove. */
export interface Destructive {
  /** What the verb does, as a verb phrase: "delete epic 12", "remove 2 permissions of labels/abc". */
  action: string;
  /** One line per thing that goes (shown before the prompt and by --dry-run). */
  items?: string[];
  /** --dry-run: show the items, change nothing. */
  dryRun?: boolean;
  /** What the question is about, already on stderr (a plan): shown again before it when it is asked on /dev/tty (stderr redirected). */
  shown?: string;
}

/** `proceed`: go ahead; `dry-run`: shown, nothing to do; `declined`: the person said no. */
export type Decision = 'proceed' | 'dry-run' | 'declined';

/**
 * The one rule for every delete (tracker and labels deletes, apply --prune, permissions removed by an
 * apply): with --dry-run show what would go and change nothing; with --yes go ahead; on a terminal
 * ask (default no); without one (piped, CI, --no-input) refuse with exit 2 naming --yes.
 */
export async function confirmDestructive(ctx: ConfirmContext, what: Destructive): Promise<Decision> {
  const items = what.items ?? [];
  if (what.dryRun) {
    ctx.io.info(`dry run: would ${what.action}${items.length ? `:\n${listItems(items)}` : ''}`);
    return 'dry-run';
  }
  if (ctx.globals.yes) return 'proceed';
  const prompter = await ctx.prompter();
  const listed = listItems(items);
  // the list is part of the question, so it is shown only when someone is asked
  const question = `${capitalise(what.action)}?${listed ? `\n${listed}` : ''}`;
  try {
    return (await prompter.confirm(question, { flag: '--yes', ...(what.shown ? { shown: what.shown } : {}) })) ? 'proceed' : 'declined';
  } catch (err) {
    if (err instanceof UsageError && err.code === 'confirmation_required') {
      throw new UsageError(`${capitalise(what.action)}: needs confirmation, and ${whyNoPrompt(ctx)}${listed ? `\n${listed}` : ''}`, {
        code: 'confirmation_required',
        field: 'yes',
        hint: 'pass --yes to confirm without a prompt, or --dry-run to see what would be deleted; nothing was changed',
      });
    }
    throw err;
  }
}

/** At most 20 lines of "  - item", then how many more. */
function listItems(items: readonly string[]): string {
  const shown = items.slice(0, 20).map((i) => `  - ${i}`);
  if (items.length > 20) shown.push(`  … and ${items.length - 20} more`);
  return shown.join('\n');
}

/** What a verb returns when it stopped at the confirmation (dry run or a "no"). */
export function notDone(decision: Exclude<Decision, 'proceed'>, what: Destructive): CommandResult {
  const items = what.items ?? [];
  return {
    data: { dry_run: decision === 'dry-run', declined: decision === 'declined', would: what.action, items, changed: false },
    text: '',
    message: decision === 'dry-run' ? 'dry run: nothing changed' : 'nothing changed',
    // a "no" is not success: a script can tell it from a done change (0) and from a failure (1)
    ...(decision === 'declined' ? { exitCode: ExitCode.declined } : {}),
  };
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
