import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { examples, lazyAction } from '../action.js';
import { NOUN_SUMMARIES } from '../nouns.js';

export function register(program: Command, ctx: Context): void {
  examples(
    program
      .command('logout')
      .description(NOUN_SUMMARIES.logout)
      .option('--account <account>', 'sign out this account (default: the active one; the next becomes active)')
      .action(
        lazyAction(
          ctx,
          () => import('./logout.js'),
          (_a, o) => ({ account: o.account }),
        ),
      ),
    'opsctl logout',
    'opsctl logout --profile work',
    'opsctl logout --account bob@example.com',
  );
}
