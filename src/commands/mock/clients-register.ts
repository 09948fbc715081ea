import { Option, type Command } from 'commander';
import type { Context } from '../../context.js';
import { CONFIRM_HELP, examples, lazyAction } from '../action.js';
import type { FieldFlags } from './clients-shared.js';

const TYPES = ['desktop', 'universal_desktop', 'mobile_a', 'mobile_b', 'extension'];
const ID = '<client_id>';

/** The field flags shared by create and update (one per field of the seed's client table). */
function fieldFlags(cmd: Command): Command {
  return cmd
    .option('--name <name>', 'the name shown in the project (1-128 characters)')
    .option('--package-name <name>', 'mobile_a: the application package name, e.g. com.example.app')
    .option('--sha1-fingerprint <hex>', 'mobile_a: SHA-1 fingerprint of the signing certificate (20 bytes hex, colons optional)')
    .option('--bundle-id <id>', 'mobile_b: the bundle identifier (frozen once the integrity check is used)')
    .option('--store-id <id>', 'mobile_b: numeric store ID (optional); universal_desktop: exactly 12 characters')
    .option('--team-id <id>', 'mobile_b: the team ID (10 characters; needed by the integrity check)')
    .option('--item-id <id>', 'extension: the store item ID (32 letters a-p)');
}

const fields = (o: FieldFlags): FieldFlags => ({
  name: o.name,
  packageName: o.packageName,
  sha1Fingerprint: o.sha1Fingerprint,
  bundleId: o.bundleId,
  storeId: o.storeId,
  teamId: o.teamId,
  itemId: o.itemId,
});

/** `opsctl mock clients …`: the developer console's side of the mock authorization server. */
export function registerClients(mock: Command, ctx: Context): void {
  const clients = mock
    .command('clients')
    .description(
      "the mock authorization server's OAuth clients, as its developer console manages them (OPSCTL_AUTH_URL, the profile's auth, or the embedded mock)",
    );
  examples(
    clients,
    'opsctl mock clients create --type mobile_b --name "iOS app" --bundle-id com.example.app --team-id ABCDE12345',
    'opsctl mock clients integrity 1234-abc.apps.mock enable',
    'OPSCTL_AUTH_URL=http://127.0.0.1:8080 opsctl mock clients list',
  );

  listVerbs(clients, ctx);
  editVerbs(clients, ctx);
  deletionVerbs(clients, ctx);
  checkVerbs(clients, ctx);

  examples(
    clients
      .command('sweep')
      .description('run the automatic deletion of unused clients now (the mock: no use for 180 days)')
      .action(
        lazyAction(
          ctx,
          () => import('./clients-sweep.js'),
          () => ({}),
        ),
      ),
    'opsctl mock clients sweep',
  );
}

/** list, get */
function listVerbs(clients: Command, ctx: Context): void {
  examples(
    clients
      .command('list')
      .alias('ls')
      .description('list clients (deleted ones too, with their status)')
      .option('--active', 'only clients that are not deleted')
      .action(
        lazyAction(
          ctx,
          () => import('./clients-list.js'),
          (_a, o) => ({ active: Boolean(o.active) }),
        ),
      ),
    'opsctl mock clients list',
    'opsctl mock clients list --active --json=client_id,status',
  );

  examples(
    clients
      .command(`get ${ID}`)
      .description('show a client: its fields, integrity check, ownership and deletion state (never the secret)')
      .action(
        lazyAction(
          ctx,
          () => import('./clients-get.js'),
          ([clientId]: [string]) => ({ clientId }),
        ),
      ),
    'opsctl mock clients get opsctl-desktop.apps.mock',
  );
}

/** create, update: the seed's fields, checked before anything is sent */
function editVerbs(clients: Command, ctx: Context): void {
  const create = fieldFlags(
    clients
      .command('create')
      .description('create a client of one of the seed types, fields checked before anything is sent')
      .addOption(new Option('--type <type>', 'the client type').choices(TYPES))
      .option('--client-id <id>', 'choose the client ID (default: a new one like 123456789012-….apps.mock)'),
  )
    .option('--custom-scheme', 'mobile_a: enable custom URI scheme (advanced setting; off by default)')
    .option('--integrity', 'mobile_b: enable the integrity check (needs --team-id and a bundle ID without *)')
    .option('--show-secret', 'print the client secret (desktop types; shown at creation only)');
  create.action(
    lazyAction(
      ctx,
      () => import('./clients-create.js'),
      (_a, o) => ({
        ...fields(o),
        type: o.type,
        clientId: o.clientId,
        customScheme: Boolean(o.customScheme),
        integrity: Boolean(o.integrity),
        showSecret: Boolean(o.showSecret),
      }),
    ),
  );
  examples(
    create,
    'opsctl mock clients create --type desktop --name "CLI" --show-secret',
    'opsctl mock clients create --type universal_desktop --name "Store app" --store-id 9NBLGGH4NNS1',
    'opsctl mock clients create --type mobile_a --name Android --package-name com.example.app --sha1-fingerprint DA:39:A3:EE:5E:6B:4B:0D:32:55:BF:EF:95:60:18:90:AF:D8:07:09',
    'opsctl mock clients create --type extension --name Ext --item-id abcdefghijklmnopabcdefghijklmnop',
  );

  const update = fieldFlags(clients.command(`update ${ID}`).description('change fields of a client (checked against its type first)'))
    .option('--custom-scheme <on|off>', 'mobile_a: the "enable custom URI scheme" advanced setting')
    .option('--clear <field>', 'clear an optional field: store-id, team-id (repeatable)', (v: string, prev: string[] = []) => [...prev, v]);
  update.action(
    lazyAction(
      ctx,
      () => import('./clients-update.js'),
      ([clientId]: [string], o) => ({ ...fields(o), clientId, customScheme: o.customScheme, clear: o.clear ?? [] }),
    ),
  );
  examples(update, 'opsctl mock clients update 1234-abc.apps.mock --custom-scheme on', 'opsctl mock clients update 1234-abc.apps.mock --team-id ABCDE12345');
}

/** delete (restorable for 30 days), restore */
function deletionVerbs(clients: Command, ctx: Context): void {
  examples(
    clients
      .command(`delete ${ID}`)
      .alias('rm')
      .description(`delete a client (${CONFIRM_HELP}); restorable for 30 days, deleted_client after`)
      .option('--dry-run', 'show what would be deleted and change nothing')
      .action(
        lazyAction(
          ctx,
          () => import('./clients-delete.js'),
          ([clientId]: [string], o) => ({ clientId, dryRun: Boolean(o.dryRun) }),
        ),
      ),
    'opsctl mock clients delete 1234-abc.apps.mock --yes',
  );

  examples(
    clients
      .command(`restore ${ID}`)
      .description('restore a client deleted less than 30 days ago')
      .action(
        lazyAction(
          ctx,
          () => import('./clients-restore.js'),
          ([clientId]: [string]) => ({ clientId }),
        ),
      ),
    'opsctl mock clients restore 1234-abc.apps.mock',
  );
}

/** mobile_b's integrity check (integrity, metrics, integrity-token) and ownership verification (verify) */
function checkVerbs(clients: Command, ctx: Context): void {
  const integrity = clients
    .command(`integrity ${ID} <action>`)
    .description('mobile_b integrity check: enable (monitoring only) | enforce | unenforce | disable; in force up to 15 minutes later')
    .action(
      lazyAction(
        ctx,
        () => import('./clients-integrity.js'),
        ([clientId, action]: [string, string]) => ({ clientId, action }),
      ),
    );
  examples(integrity, 'opsctl mock clients integrity 1234-abc.apps.mock enable', 'opsctl mock clients integrity 1234-abc.apps.mock enforce');

  examples(
    clients
      .command(`metrics ${ID}`)
      .description('mobile_b integrity metrics: verified, unverified outdated client, unverified unknown origin, unverified invalid (and rejected)')
      .action(
        lazyAction(
          ctx,
          () => import('./clients-metrics.js'),
          ([clientId]: [string]) => ({ clientId }),
        ),
      ),
    'opsctl mock clients metrics 1234-abc.apps.mock',
    'opsctl mock clients metrics 1234-abc.apps.mock --json',
  );

  examples(
    clients
      .command(`integrity-token ${ID}`)
      .description('print a valid integrity token for a mobile_b app (the attestation service stand-in), for X-Integrity-Token')
      .action(
        lazyAction(
          ctx,
          () => import('./clients-integrity-token.js'),
          ([clientId]: [string]) => ({ clientId }),
        ),
      ),
    'curl -H "X-Integrity-Token: $(opsctl mock clients integrity-token 1234-abc.apps.mock)" …',
  );

  examples(
    clients
      .command(`verify ${ID}`)
      .description('ownership verification of a mobile_a or extension client against the store listings')
      .requiredOption('--account <email>', "the verifying account (store-console admin, or the item's publisher)")
      .action(
        lazyAction(
          ctx,
          () => import('./clients-verify.js'),
          ([clientId]: [string], o) => ({ clientId, account: o.account }),
        ),
      ),
    'opsctl mock clients verify 1234-abc.apps.mock --account alice@example.com',
  );
}
