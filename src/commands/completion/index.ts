import { Argument, type Command } from 'commander';
import type { Context } from '../../context.js';
import { examples, lazyAction } from '../action.js';
import { NOUN_SUMMARIES } from '../nouns.js';

export function register(program: Command, ctx: Context): void {
  const cmd = program
    .command('completion')
    .description(NOUN_SUMMARIES.completion)
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh', 'fish']))
    .action(
      lazyAction(
        ctx,
        () => import('./print.js'),
        ([shell]: [string]) => ({ shell, program }),
      ),
    );
  examples(
    cmd,
    'opsctl completion bash > /etc/bash_completion.d/opsctl',
    'opsctl completion zsh > "${fpath[1]}/_opsctl"',
    'opsctl completion fish > ~/.config/fish/completions/opsctl.fish',
  );
}
