import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { runBin } from '../helpers/bin.js';
import { runCli, tempConfigDir } from '../helpers/cli.js';
import { serveUrl } from '../helpers/serve.js';

/**
 * The mock's developer-console API (/oauth2/mock/…) and the --test knobs (/__mock/…) have no
 * authentication, so `opsctl mock serve` refuses a --host off loopback unless --expose-admin says so,
 * and then warns naming what is open.
 */
let cfg: ReturnType<typeof tempConfigDir>;
let env: NodeJS.ProcessEnv;
beforeEach(() => {
  cfg = tempConfigDir('opsctl-serve-exposure-');
  env = { OPSCTL_CONFIG_DIR: cfg.dir };
});
afterEach(() => cfg.cleanup());

describe('opsctl mock serve --host off loopback', () => {
  for (const host of ['0.0.0.0', '::', '192.0.2.1', 'example.com']) {
    it(`--host ${host} without --expose-admin: exit 2 before listening, naming the admin API and the flag`, async () => {
      const r = await runCli(['mock', 'serve', '--memory', '--port', '0', '--host', host], { env });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`--host ${host}`);
      expect(r.stderr).toContain('/oauth2/mock/');
      expect(r.stderr).toContain('no authentication');
      expect(r.stderr).toContain('--expose-admin');
      expect(r.stderr).not.toContain('/__mock/'); // no --test: the knobs are off and not named
      expect(r.stdout).toBe(''); // nothing listened, no URL or token printed
    });
  }

  it('with --test the refusal names the /__mock/ knobs too', async () => {
    const r = await runCli(['mock', 'serve', '--memory', '--test', '--port', '0', '--host', '0.0.0.0'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('/oauth2/mock/');
    expect(r.stderr).toContain('/__mock/');
  });

  for (const host of ['127.0.0.1', '::1', 'localhost']) {
    it(`--host ${host} (loopback) serves without the flag and without a warning`, async () => {
      const serve = runBin(['mock', 'serve', '--memory', '--port', '0', '--host', host, '--json'], { env });
      try {
        const url = await serveUrl(serve);
        const res = await request(`${url}/oauth2/mock/clients`);
        expect(res.statusCode).toBe(200);
        await res.body.dump();
      } finally {
        serve.kill('SIGTERM');
      }
      const done = await serve;
      expect(done.exitCode).toBe(0);
      expect(String(done.stderr)).not.toContain('--expose-admin');
    });
  }

  it('--expose-admin serves off loopback and warns on stderr naming what is open (traffic stays on loopback)', async () => {
    const serve = runBin(['mock', 'serve', '--memory', '--test', '--port', '0', '--host', '0.0.0.0', '--expose-admin', '--json'], { env });
    try {
      const url = await serveUrl(serve);
      const port = new URL(url).port;
      const res = await request(`http://127.0.0.1:${port}/oauth2/mock/clients`);
      expect(res.statusCode).toBe(200);
      await res.body.dump();
    } finally {
      serve.kill('SIGTERM');
    }
    const done = await serve;
    expect(done.exitCode).toBe(0);
    const stderr = String(done.stderr);
    expect(stderr).toMatch(
      /! listening on 0\.0\.0\.0 \(--expose-admin\): anyone who can reach http:\/\/\S+ can use the developer-console API \/oauth2\/mock\/…/,
    );
    expect(stderr).toContain('/__mock/');
  });
});
