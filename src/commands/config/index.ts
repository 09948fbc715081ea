import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { examples, lazyAction } from '../action.js';
import { NOUN_SUMMARIES } from '../nouns.js';

export function register(program: Command, ctx: Context): void {
  const config = program.command('config').description(NOUN_SUMMARIES.config);
  examples(
    config
      .command('get <key>')
      .description('print one setting of the active profile (or "profile", the default profile)')
      .action(
        lazyAction(
          ctx,
          () => import('./get.js'),
          ([key]: [string]) => ({ key }),
        ),
      ),
    'opsctl config get tracker --profile work',
  );
  examples(
    config
      .command('set <key> <value>')
      .description('change a setting of the active profile')
      .action(
        lazyAction(
          ctx,
          () => import('./set.js'),
          ([key, value]: [string, string]) => ({ key, value }),
        ),
      ),
    'opsctl config set tracker https://api.app.shortcut.com --profile work',
    'opsctl config set profile work',
  );
  examples(
    config
      .command('unset <key>')
      .description('remove a setting of the active profile')
      .action(
        lazyAction(
          ctx,
          () => import('./unset.js'),
          ([key]: [string]) => ({ key }),
        ),
      ),
    'opsctl config unset labels --profile work',
  );
  examples(
    config
      .command('list')
      .alias('ls')
      .description('list the settings of every profile (secrets hidden)')
      .action(
        lazyAction(
          ctx,
          () => import('./list.js'),
          () => ({}),
        ),
      ),
    'opsctl config list --json',
  );
}
