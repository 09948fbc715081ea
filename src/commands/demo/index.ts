import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { examples, lazyAction } from '../action.js';
import { NOUN_SUMMARIES } from '../nouns.js';

export function register(program: Command, ctx: Context): void {
  const cmd = program
    .command('demo')
    .description(NOUN_SUMMARIES.demo)
    .option('--keep', 'keep the temporary state directory and print where it is')
    .action(
      lazyAction(
        ctx,
        () => import('./run.js'),
        (_a, o) => ({ keep: Boolean(o.keep) }),
      ),
    );
  examples(cmd, 'opsctl demo', 'npm start');
}
