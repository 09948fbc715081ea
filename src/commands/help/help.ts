import type { Command } from 'commander';
import { rootOf, type OptionsOf } from '../spec.js';
import type { spec } from './help.spec.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../core/errors.js';
import { exitCodeHelp } from '../../core/exit-codes.js';
import type { CommandResult } from '../../core/output.js';
import { VERSION } from '../../core/version.js';
import { manPages, referenceMarkdown, referenceOf } from './lib/reference.js';

export type Options = OptionsOf<typeof spec>;

/** Every variable opsctl reads (test/unit/help-environment.test.ts checks this list against src/). */
export const ENVIRONMENT: ReadonlyArray<[string, string]> = [
  ['OPSCTL_CONFIG_DIR', 'move the config, credentials and data directories (tests, CI)'],
  ['OPSCTL_PROFILE', 'the profile to use when --profile is not given'],
  ['OPSCTL_<SERVICE>_URL', 'endpoint of a service (AUTH, API, TRACKER, LABELS); beats the profile'],
  ['OPSCTL_TRACKER_TOKEN', 'tracker API token; beats the stored one'],
  ['OPSCTL_ACCESS_TOKEN', 'OAuth access token for the api and labels services; beats the stored one'],
  [
    'OPSCTL_REFRESH_TOKEN',
    'CI: an OAuth refresh token (with OPSCTL_CLIENT_ID and OPSCTL_ISSUER) refreshed in memory as needed, never written; beats the stored sign-in',
  ],
  ['OPSCTL_ISSUER', "OpenID Connect / OAuth 2.0 issuer to sign in to (endpoints from its metadata); beats the profile's issuer"],
  [
    'OPSCTL_AUTHORIZE_URL, OPSCTL_TOKEN_URL, OPSCTL_REVOKE_URL',
    "OAuth endpoints; beat the profile and the issuer's metadata (default: <auth>/o/oauth2/v2/auth, <auth>/token, <auth>/revoke)",
  ],
  ['OPSCTL_USERINFO_URL, OPSCTL_JWKS_URI', "userinfo endpoint and ID-token key set; beat the profile and the issuer's metadata"],
  ['OPSCTL_CLIENT_ID, OPSCTL_CLIENT_SECRET', 'OAuth client for opsctl login; beat the profile'],
  ['OPSCTL_TRACKER_RATE_LIMIT', 'client-side pacing of tracker requests, e.g. 200/1m (the default)'],
  ['OPSCTL_TRACKER_PACING', 'shared (default: every opsctl process of this user shares the limit through a file in the data dir) or process (pace alone)'],
  ['OPSCTL_TRACKER_TOKEN_HEADER', 'header carrying the tracker token: Shortcut-Token (default for *.shortcut.com) or Tracker-Token (default elsewhere)'],
  ['OPSCTL_TRACKER_UPLOAD_LIMIT', 'largest tracker files upload request opsctl sends, e.g. 20MB (default 50MB); files are batched under it'],
  [
    'OPSCTL_HTTP_TIMEOUT_MS',
    'how long one HTTP request may wait for answers, all retries included (default 30000); after 3 s of silence opsctl says what it waits for',
  ],
  ['OPSCTL_MOCK_OAUTH_CLIENTS', 'a clients file (JSON or YAML) for the embedded mock authorization server'],
  ['OPSCTL_MOCK_TRUST_JWKS', "keyless CI: a CI issuer's key set (JSON) the embedded mock trusts for token exchange (login --with-oidc-token)"],
  ['OPSCTL_OIDC_TOKEN_FILE', 'keyless CI: the file the CI writes its OIDC token to; opsctl login exchanges it (RFC 8693) with no flag'],
  ['OPSCTL_MOCK_STATE', 'the state file of the embedded mock (default: mock-state.json in the data dir)'],
  ['OPSCTL_KV_CACERT, OPSCTL_KV_CERT, OPSCTL_KV_KEY', 'kv: TLS CA bundle, client certificate and key (like --cacert/--cert/--key)'],
  ['OPSCTL_KV_INSECURE_SKIP_TLS_VERIFY=1', "kv: do not verify the members' certificates (warned about)"],
  ['OPSCTL_KV_USER', 'kv: etcd auth user (like --user)'],
  ['OPSCTL_KV_PASSWORD, OPSCTL_KV_PASSWORD_FILE', 'kv: the password of --user, or a file holding it (never a flag value)'],
  [
    'ETCDCTL_ENDPOINTS',
    "kv, as etcdctl: the cluster's client URLs (host:2379 or URLs, comma-separated) when neither --endpoints nor --cluster is given; beats the sandbox",
  ],
  [
    'ETCDCTL_CACERT, ETCDCTL_CERT, ETCDCTL_KEY, ETCDCTL_INSECURE_SKIP_TLS_VERIFY',
    'kv, as etcdctl: TLS as --cacert/--cert/--key/--insecure-skip-tls-verify; a flag and the OPSCTL_KV_CACERT family beat them, they beat a cluster file',
  ],
  ['ETCDCTL_USER, ETCDCTL_PASSWORD', 'kv, as etcdctl: the etcd user (NAME, or NAME:PASSWORD) and its password; --user and OPSCTL_KV_USER beat them'],
  ['ETCDCTL_DIAL_TIMEOUT', 'kv, as etcdctl: how long connecting to a member may take, e.g. 2s (like --dial-timeout; default: the request timeout)'],
  ['ETCDCTL_COMMAND_TIMEOUT', 'kv, as etcdctl: the timeout of one request to a member, e.g. 5s (like --request-timeout; default 3s)'],
  [
    'AWS_ACCESS_KEY_ID, AWS_PROFILE, AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_S3',
    'kv s3:// places (snapshot save --to, upgrade --backup-to, backups --from, restore --from): credentials, profile and endpoint as the AWS CLI reads them, with ~/.aws/config and ~/.aws/credentials (like --aws-profile, --endpoint-url)',
  ],
  [
    'AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE',
    'kv s3:// places: where the shared credentials and config files are (default ~/.aws/credentials, ~/.aws/config), as the AWS CLI reads them; named in credential errors',
  ],
  [
    'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED',
    "set to true by opsctl unless given: the S3 SDK's notice about Node versions it will drop is not printed",
  ],
  ['OPSCTL_KV_MEMBER', 'kv sandbox: path of the simulated member program (default: dist/kv-member.cjs beside the bundle)'],
  [
    'OPSCTL_CODE_CACHE',
    'where opsctl keeps the V8 code cache of its own program (default: $XDG_CACHE_HOME/opsctl/code, else $HOME/.cache/opsctl/code); OPSCTL_CONFIG_DIR does not move it',
  ],
  ['HOME, XDG_CACHE_HOME', 'the default place of that code cache (the config and data directories follow the platform: env-paths)'],
  ['NODE_DISABLE_COMPILE_CACHE=1', "no code cache: each command compiles opsctl's code afresh (a slower start, nothing written)"],
  ['OPSCTL_DEBUG=1', 'same as --debug'],
  ['NO_COLOR, FORCE_COLOR', 'turn colour off, or force it on when piped'],
  ['CLICOLOR=0, CLICOLOR_FORCE=1', 'as gh: colour off on a terminal, or on when piped (NO_COLOR wins over both)'],
  ['TERM=dumb', 'no colour and no redrawn progress line (one plain line per step)'],
  ['OPSCTL_COMPLETE_DYNAMIC=1', 'shell completion also offers names the service knows (states, labels, epics) by asking it (opsctl __complete)'],
  ['OPSCTL_COMPLETE_TIMEOUT_MS', 'how long one such completion may wait for the service (default 2000); it prints nothing on any error'],
  ['CI', 'when set: no prompts, no browser, no redrawn progress line'],
  [
    'SSH_CONNECTION, DISPLAY, WAYLAND_DISPLAY',
    'opsctl login and --web open no browser in an SSH session or, on Linux, without a display (login prints the URL; --web prints it and exits 1)',
  ],
  ['BROWSER', 'the program that opens a URL (run by xdg-open); when set, login and --web open it even without a display or over SSH'],
  [
    'DBUS_SESSION_BUS_ADDRESS',
    'on Linux, the D-Bus session of the Secret Service (OS keyring) that keeps tokens and the client secret; without it they go to the 0600 credential file, said once',
  ],
];

/** `opsctl help [topic...]`: a topic, or the help of the command the words name (`cmd` is `help` itself: its root is the tree). */
export function run(opts: Options, ctx: Context, cmd: Command): Promise<CommandResult> {
  return Promise.resolve().then(() => topic(opts, rootOf(cmd), ctx));
}

function topic(opts: Options, program: Command, ctx: Context): CommandResult {
  const [first] = opts.topic;
  if (first === 'exit-codes') {
    return {
      data: exitCodeHelp.map(([code, name, meaning]) => ({ code, name, meaning })),
      columns: [{ key: 'code' }, { key: 'name' }, { key: 'meaning' }],
    };
  }
  if (first === 'environment') {
    return { data: ENVIRONMENT.map(([name, meaning]) => ({ name, meaning })), columns: [{ key: 'name' }, { key: 'meaning' }] };
  }
  if (first === 'reference' || first === 'man') {
    const docs = referenceOf(program);
    if (first === 'man')
      return {
        data: manPages(docs, VERSION),
        text: manPages(docs, VERSION)
          .map((p) => p.name)
          .join('\n'),
      };
    return { data: docs, text: referenceMarkdown(docs).trimEnd() };
  }
  let cmd = program;
  for (const word of opts.topic) {
    const next = cmd.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (!next)
      throw new UsageError(`no help topic or command "${opts.topic.join(' ')}"`, {
        hint: 'topics: exit-codes, environment, reference, man; or a command such as "tracker labels"',
      });
    cmd = next;
  }
  ctx.io.out(cmd.helpInformation());
  return {};
}
