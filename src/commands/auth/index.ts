import { Option, type Command } from 'commander';
import type { Context } from '../../context.js';
import { examples, lazyAction } from '../action.js';
import { NOUN_SUMMARIES } from '../nouns.js';

export function register(program: Command, ctx: Context): void {
  const auth = program.command('auth').description(NOUN_SUMMARIES.auth);
  examples(
    auth
      .command('login')
      .description('store a credential for a service; the tracker token is read from stdin with --with-token')
      .addOption(new Option('--service <service>', 'the service the token is for').choices(['tracker']).default('tracker'))
      .option('--with-token', 'read the token from standard input')
      .action(lazyAction(ctx, () => import('./login.js'), (_args, o) => ({ service: o.service, withToken: Boolean(o.withToken) }))),
    'opsctl auth login --service tracker --with-token < token.txt',
    'echo "$TRACKER_TOKEN" | opsctl auth login --service tracker --with-token --profile work',
  );
  examples(
    auth
      .command('status')
      .description('show the signed-in account, granted and missing scopes, token expiry and where the token comes from (exit 4 if not signed in)')
      .action(lazyAction(ctx, () => import('./status.js'), () => ({}))),
    'opsctl auth status',
    'opsctl auth status --json',
  );
  examples(
    auth
      .command('token')
      .description('print a valid OAuth access token for scripts (refreshed first when less than 5 minutes remain)')
      .action(lazyAction(ctx, () => import('./token.js'), () => ({}))),
    'curl -H "Authorization: Bearer $(opsctl auth token)" "$API/media/v3/channels?part=id&mine=true"',
  );
}
