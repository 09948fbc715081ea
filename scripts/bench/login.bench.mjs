// Login: CPU of the sign-in commands against the embedded mock and against oidc-provider (a real,
// independent OpenID Connect server in this process), as ratios to `node -e 0` (budget 3x).
import { startOidcProvider, signInThroughPages, OIDC_CLIENT_ID } from '../../test/helpers/oidc-provider.mjs';

/** A stderr watcher that, once opsctl prints its sign-in URL, signs in through oidc-provider's pages like a browser. */
function playBrowser() {
  let started = false;
  return (stderr) => {
    const m = /(http:\/\/127\.0\.0\.1:\d+\/auth\?\S+)/.exec(stderr);
    if (!m || started) return;
    started = true;
    void signInThroughPages(m[1], 'bench@example.org')
      .then(({ location }) => fetch(location))
      .then((r) => r.text())
      .catch((err) => console.error(`bench: the sign-in through oidc-provider failed: ${err.message}`));
  };
}

export default async function (report, { BIN, interleaved, measure, tempDir }) {
  const rounds = Math.max(5, Math.floor(Number(process.env.BENCH_ROUNDS ?? 15) / 2));
  const env = { OPSCTL_CONFIG_DIR: tempDir('opsctl-bench-login-') };
  const first = await measure([BIN, 'login', '--consent-as', 'alice@example.com'], { env });
  if (first.code !== 0) throw new Error(`login setup failed: ${first.stderr}`);

  // oidc-provider's warnings about its development defaults are not the bench's business.
  const warn = console.warn;
  const info = console.info;
  console.warn = console.info = () => undefined;
  const op = await startOidcProvider();
  const oidcEnv = { OPSCTL_CONFIG_DIR: tempDir('opsctl-bench-oidc-'), OPSCTL_ISSUER: op.issuer, OPSCTL_CLIENT_ID: OIDC_CLIENT_ID };
  const oidcLogin = [BIN, 'login', '--no-browser', '--timeout', '1m', '--scopes', 'openid', 'email', 'offline_access'];
  try {
    // The first sign-in fetches and caches the provider's metadata, as a user's first one does.
    const setup = await measure(oidcLogin, { env: oidcEnv, onStderr: playBrowser() });
    if (setup.code !== 0) throw new Error(`login against oidc-provider failed: ${setup.stderr}`);
    const results = await interleaved(
      [
        { name: 'node -e 0', args: ['-e', '0'] },
        { name: 'opsctl auth status', args: [BIN, 'auth', 'status'], env },
        { name: 'opsctl auth token', args: [BIN, 'auth', 'token'], env },
        { name: 'opsctl api /media/v3/channels (embedded)', args: [BIN, 'api', '/media/v3/channels', '-f', 'part=snippet', '-f', 'mine=true'], env },
        { name: 'opsctl login --consent-as (embedded, whole flow)', args: [BIN, 'login', '--consent-as', 'alice@example.com'], env },
        { name: 'opsctl login (oidc-provider, whole flow, ID token checked)', args: oidcLogin, env: oidcEnv, onStderr: playBrowser },
      ],
      rounds,
    );
    const base = results['node -e 0'].cpuMs;
    for (const [name, r] of Object.entries(results)) {
      if (name === 'node -e 0') continue;
      const ratio = r.cpuMs / base;
      report.row(`${name}: CPU vs node -e 0`, `${ratio.toFixed(2)}x (${r.cpuMs.toFixed(1)} ms)`, '<= 3x', ratio <= 3);
    }
    const peak = Math.max(
      ...Object.entries(results)
        .filter(([n]) => n !== 'node -e 0')
        .map(([, v]) => v.maxRssMb),
    );
    report.row('login commands: peak memory', `${peak.toFixed(1)} MB`, '< 100 MB', peak < 100);
  } finally {
    await op.close();
    console.warn = warn;
    console.info = info;
  }
}
