import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'serve',
  summary: 'serve every mocked service on one origin until SIGINT/SIGTERM, then save state and exit 0',
  flags: {
    port: { type: 'string', value: 'port', help: 'port to listen on (0: any free port; below 1024: root or CAP_NET_BIND_SERVICE)', default: '0' },
    host: { type: 'string', value: 'host', help: 'address to listen on; off loopback only with --expose-admin', default: '127.0.0.1' },
    exposeAdmin: {
      type: 'boolean',
      help: 'allow a --host off loopback although it opens the unauthenticated developer-console API (/oauth2/mock/…) and, with --test, the /__mock/ knobs (warned about)',
    },
    state: { type: 'string', value: 'file', help: 'keep state in this JSON file (default: opsctl data dir)', conflicts: 'memory' },
    memory: { type: 'boolean', help: 'keep state in memory only' },
    salvageJournal: {
      type: 'boolean',
      help: 'start from a state file whose journal has lines that cannot be applied: keep every line that still applies, set the others aside in FILE.journal.rejected (named), the journal as it was in FILE.journal.bad',
      conflicts: 'memory',
    },
    test: { type: 'boolean', help: 'turn on test knobs: x-mock-status header, POST /__mock/faults, GET /__mock/requests, POST /__mock/clock' },
    trackerRateLimit: { type: 'string', value: 'rate', help: 'tracker limit as requests/window', default: '200/1m' },
    trackerMaxGroups: {
      type: 'string',
      value: 'n',
      help: 'tracker entitlement: active groups (teams) the plan allows (default 100); beyond it 403 UnusableEntitlementError',
    },
    trackerMaxObjectives: {
      type: 'string',
      value: 'n',
      help: 'tracker entitlement: objectives the plan allows (default 1000); beyond it 403 UnusableEntitlementError',
    },
    trackerStrict: {
      type: 'boolean',
      help: 'the tracker refuses (422) what its contract only advises against, e.g. a project abbreviation over 3 characters (the real service takes it)',
    },
    maxUpload: { type: 'string', value: 'size', help: 'largest tracker file-upload request, e.g. 200MB (streamed: memory stays flat)', default: '50MB' },
    oauthClients: { type: 'string', value: 'file', help: 'merge OAuth clients and users from this JSON or YAML file into the registry' },
    accessTokenTtl: { type: 'string', value: 'seconds', help: 'OAuth access-token lifetime', default: '3600' },
    refreshTokenTtl: { type: 'string', value: 'seconds', help: 'make every grant time-based: refresh tokens expire after this many seconds' },
    refreshTokenLimit: { type: 'string', value: 'n', help: 'live refresh tokens per client and user; the oldest stop working beyond it', default: '100' },
    trustJwks: {
      type: 'string',
      value: 'file',
      help: "keyless CI (RFC 8693 token exchange): a CI provider's key set (its jwks_uri document saved as JSON); tokens it signed are exchanged for access tokens",
    },
    ciAudience: { type: 'string', value: 'aud', help: 'with --trust-jwks: the audience a CI token must carry', default: 'opsctl' },
    ownershipDelay: {
      type: 'string',
      value: 'duration',
      help: 'how long access granted on a store listing takes to reach ownership verification (the seed: "a few minutes"), e.g. 2m',
      default: '0',
    },
    integrityDelay: {
      type: 'string',
      value: 'seconds',
      help: 'how long an integrity-check change takes to come into force (the seed: up to 15 minutes)',
      default: '900',
    },
    unusedClientDays: { type: 'string', value: 'days', help: 'days without use after which the console deletes a client', default: '180' },
    deviceInterval: { type: 'string', value: 'seconds', help: 'device sign-in (login --device): the polling interval the server asks for', default: '5' },
    deviceSlowDown: {
      type: 'string',
      value: 'n',
      help: 'device sign-in: answer slow_down to the first N polls of each code, as a loaded server does',
      default: '0',
    },
  },
  examples: [
    'opsctl mock serve --port 8080',
    'opsctl mock serve --memory --test --json',
    'opsctl mock serve --access-token-ttl 60 --refresh-token-ttl 600 --oauth-clients clients.yaml',
  ],
  load: (): RunModule => import('./serve.js'),
});
