import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { examples, lazyAction } from '../action.js';
import { NOUN_SUMMARIES } from '../nouns.js';

export function register(program: Command, ctx: Context): void {
  const cmd = program
    .command('help [topic...]')
    .description(NOUN_SUMMARIES.help)
    .action(
      lazyAction(
        ctx,
        () => import('./topic.js'),
        ([topic]: [string[]]) => ({ topic, program }),
      ),
    );
  examples(cmd, 'opsctl help exit-codes', 'opsctl help tracker labels');
}
