import { Option, type Command } from 'commander';
import type { Context } from '../../context.js';
import { examples, lazyAction } from '../action.js';
import { NOUN_SUMMARIES } from '../nouns.js';
import { registerClients } from './clients-register.js';
import { registerEvents } from './events-register.js';

export function register(program: Command, ctx: Context): void {
  const mock = program.command('mock').description(NOUN_SUMMARIES.mock);
  examples(
    mock
      .command('serve')
      .description('serve every mocked service on one origin until SIGINT/SIGTERM, then save state and exit 0')
      .option('--port <port>', 'port to listen on (0: any free port)', '0')
      .option('--host <host>', 'address to listen on; off loopback only with --expose-admin', '127.0.0.1')
      .option(
        '--expose-admin',
        'allow a --host off loopback although it opens the unauthenticated developer-console API (/oauth2/mock/…) and, with --test, the /__mock/ knobs (warned about)',
      )
      .addOption(new Option('--state <file>', 'keep state in this JSON file (default: opsctl data dir)').conflicts('memory'))
      .option('--memory', 'keep state in memory only')
      .option('--test', 'turn on test knobs: x-mock-status header, POST /__mock/faults, GET /__mock/requests, POST /__mock/clock')
      .option('--tracker-rate-limit <rate>', 'tracker limit as requests/window', '200/1m')
      .option('--tracker-max-groups <n>', 'tracker entitlement: active groups (teams) the plan allows (default 100); beyond it 403 UnusableEntitlementError')
      .option('--tracker-max-objectives <n>', 'tracker entitlement: objectives the plan allows (default 1000); beyond it 403 UnusableEntitlementError')
      .option('--max-upload <size>', 'largest tracker file-upload request, e.g. 200MB (streamed: memory stays flat)', '50MB')
      .option('--oauth-clients <file>', 'merge OAuth clients and users from this JSON or YAML file into the registry')
      .option('--access-token-ttl <seconds>', 'OAuth access-token lifetime', '3600')
      .option('--refresh-token-ttl <seconds>', 'make every grant time-based: refresh tokens expire after this many seconds')
      .option('--refresh-token-limit <n>', 'live refresh tokens per client and user; the oldest stop working beyond it', '100')
      .option('--integrity-delay <seconds>', 'how long an integrity-check change takes to come into force (the seed: up to 15 minutes)', '900')
      .option('--unused-client-days <days>', 'days without use after which the console deletes a client', '180')
      .option('--device-interval <seconds>', 'device sign-in (login --device): the polling interval the server asks for', '5')
      .option('--device-slow-down <n>', 'device sign-in: answer slow_down to the first N polls of each code, as a loaded server does', '0')
      .action(
        lazyAction(
          ctx,
          () => import('./serve.js'),
          (_a, o) => ({
            port: o.port,
            host: o.host,
            state: o.state,
            memory: Boolean(o.memory),
            test: Boolean(o.test),
            exposeAdmin: Boolean(o.exposeAdmin),
            trackerRateLimit: o.trackerRateLimit,
            trackerMaxGroups: o.trackerMaxGroups,
            trackerMaxObjectives: o.trackerMaxObjectives,
            maxUpload: o.maxUpload,
            oauthClients: o.oauthClients,
            accessTokenTtl: o.accessTokenTtl,
            refreshTokenTtl: o.refreshTokenTtl,
            refreshTokenLimit: o.refreshTokenLimit,
            integrityDelay: o.integrityDelay,
            unusedClientDays: o.unusedClientDays,
            deviceInterval: o.deviceInterval,
            deviceSlowDown: o.deviceSlowDown,
          }),
        ),
      ),
    'opsctl mock serve --port 8080',
    'opsctl mock serve --memory --test --json',
    'opsctl mock serve --access-token-ttl 60 --refresh-token-ttl 600 --oauth-clients clients.yaml',
  );
  registerClients(mock, ctx);
  registerEvents(mock, ctx);
}
