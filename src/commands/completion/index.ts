import { Argument, type Command } from 'commander';
import type { Context } from '../../context.js';
import { examples, lazyAction } from '../action.js';
import { NOUN_SUMMARIES } from '../nouns.js';

export function register(program: Command, ctx: Context): void {
  const cmd = program
    .command('completion')
    .description(NOUN_SUMMARIES.completion)
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh', 'fish']))
    .option('--dynamic', 'also complete names the service knows (states, labels, epics) by asking it, as OPSCTL_COMPLETE_DYNAMIC=1 does')
    .action(
      lazyAction(
        ctx,
        () => import('./print.js'),
        ([shell]: [string], o) => ({ shell, program, dynamic: Boolean(o.dynamic) }),
      ),
    );
  examples(
    cmd,
    'opsctl completion bash > /etc/bash_completion.d/opsctl',
    'opsctl completion zsh > "${fpath[1]}/_opsctl"',
    'opsctl completion fish > ~/.config/fish/completions/opsctl.fish',
    'opsctl completion bash --dynamic > ~/.local/share/bash-completion/completions/opsctl',
  );
}

/** `opsctl __complete SOURCE [PREFIX]`: hidden; what the completion scripts call for names the service knows. */
export function registerComplete(program: Command, ctx: Context): void {
  program
    .command('__complete', { hidden: true })
    .description('print the names the service knows for a completion, one a line (used by the completion scripts)')
    .argument('<source>', 'states, labels, epics or profiles')
    .argument('[prefix]', 'only names that start with this')
    .action(
      lazyAction(
        ctx,
        () => import('./complete.js'),
        ([source, prefix]: [string, string | undefined]) => ({ source, prefix: prefix ?? '' }),
      ),
    );
}
