import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { examples, lazyAction } from '../action.js';
import { NOUN_SUMMARIES } from '../nouns.js';

export function register(program: Command, ctx: Context): void {
  examples(
    program
      .command('logout')
      .description(NOUN_SUMMARIES.logout)
      .action(lazyAction(ctx, () => import('./logout.js'), () => ({}))),
    'opsctl logout',
    'opsctl logout --profile work',
  );
}
