import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { examples, lazyAction } from '../action.js';

export function register(program: Command, ctx: Context): void {
  examples(
    program
      .command('logout')
      .description('revoke the stored OAuth tokens on the server and remove them locally')
      .action(lazyAction(ctx, () => import('./logout.js'), () => ({}))),
    'opsctl logout',
    'opsctl logout --profile work',
  );
}
