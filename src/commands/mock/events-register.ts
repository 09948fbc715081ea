import { Option, type Command } from 'commander';
import type { Context } from '../../context.js';
import { CONFIRM_HELP, examples, lazyAction } from '../action.js';

const KINDS = ['sessions-revoked', 'token-revoked', 'account-disabled', 'account-enabled'];

/** `opsctl mock events …`: security events (signed SETs) the mock pushes to registered receivers. */
export function registerEvents(mock: Command, ctx: Context): void {
  const events = mock.command('events').description('security events (RFC 8417 SETs, pushed per RFC 8935) the mock authorization server sends to receivers');
  examples(
    events,
    'opsctl mock events receivers add --url http://127.0.0.1:9000/secevents --client-id opsctl-desktop.apps.mock',
    'opsctl mock events trigger account-disabled --user alice@example.com',
    'opsctl mock events list --status pending',
  );

  examples(
    events
      .command('list')
      .alias('ls')
      .description('the SETs sent or still being retried, with their delivery status')
      .addOption(new Option('--status <status>', 'only these').choices(['pending', 'delivered', 'rejected']))
      .option('--with-set', 'include each signed SET (with --json)')
      .action(
        lazyAction(
          ctx,
          () => import('./events-list.js'),
          (_a, o) => ({ status: o.status, withSet: Boolean(o.withSet) }),
        ),
      ),
    'opsctl mock events list',
    'opsctl mock events list --status pending --json=jti,attempts,last_error',
  );

  const trigger = events
    .command('trigger <event>')
    .description(`make something happen to an account and send its SETs: ${KINDS.join(' | ')}`)
    .requiredOption('--user <email|sub>', 'the account')
    .option('--client-id <id>', 'token-revoked: the client whose refresh tokens the user revokes')
    .addOption(new Option('--reason <reason>', 'account-disabled: why').choices(['hijacking', 'bulk-account']))
    .action(
      lazyAction(
        ctx,
        () => import('./events-trigger.js'),
        ([event]: [string], o) => ({ event, user: o.user, clientId: o.clientId, reason: o.reason }),
      ),
    );
  examples(
    trigger,
    'opsctl mock events trigger sessions-revoked --user alice@example.com',
    'opsctl mock events trigger token-revoked --user bob@example.com --client-id opsctl-desktop.apps.mock',
  );

  examples(
    events
      .command('deliver')
      .description('try every pending SET now instead of at its next retry')
      .action(
        lazyAction(
          ctx,
          () => import('./events-deliver.js'),
          () => ({}),
        ),
      ),
    'opsctl mock events deliver',
  );

  const receivers = events.command('receivers').description('where SETs are pushed (one receiver per client and URL)');
  examples(receivers, 'opsctl mock events receivers list');
  const add = receivers
    .command('add')
    .description("register a push receiver for a client's users")
    .requiredOption('--url <url>', 'the receiver endpoint (answers 202 to a POST of application/secevent+jwt)')
    .requiredOption('--client-id <id>', "the client (the SETs' aud) whose users' events it receives")
    .option('--events <kinds>', `only these (comma-separated): ${KINDS.join(', ')}`, (v: string, prev: string[] = []) => [...prev, v])
    .action(
      lazyAction(
        ctx,
        () => import('./events-receivers-add.js'),
        (_a, o) => ({ url: o.url, clientId: o.clientId, events: o.events ?? [] }),
      ),
    );
  examples(add, 'opsctl mock events receivers add --url http://127.0.0.1:9000/secevents --client-id opsctl-desktop.apps.mock --events account-disabled');
  const list = receivers
    .command('list')
    .alias('ls')
    .description('the registered receivers')
    .action(
      lazyAction(
        ctx,
        () => import('./events-receivers-list.js'),
        () => ({}),
      ),
    );
  examples(list, 'opsctl mock events receivers list --json');
  const remove = receivers
    .command('remove <id>')
    .alias('rm')
    .description(`remove a receiver and its undelivered SETs (${CONFIRM_HELP})`)
    .option('--dry-run', 'show what would be removed and change nothing')
    .action(
      lazyAction(
        ctx,
        () => import('./events-receivers-remove.js'),
        ([id]: [string], o) => ({ id, dryRun: Boolean(o.dryRun) }),
      ),
    );
  examples(remove, 'opsctl mock events receivers remove rcv_0123456789ab');
}
