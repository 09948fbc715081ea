import { execa } from 'execa';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, runBin } from '../helpers/bin.js';
import { authorizationUrl, requireChromium, withChromiumPage } from '../helpers/chromium.js';
import { tempConfigDir } from '../helpers/cli.js';

const HOOKS = fileURLToPath(new URL('../helpers/record-modules.cjs', import.meta.url));
const haveChromium = requireChromium();

/**
 * The embedded mock answers a command in its own process from a virtual origin and opens a loopback socket only
 * when something outside the process needs one (packages/mock/src/embedded.ts): a list loads no socket code, an
 * upload (multipart, streamed) and a browser's sign-in get a real socket, and the state is the same file throughout.
 */
describe('the embedded mock listens only when a socket is needed (built binary, no configuration)', () => {
  const dirs: Array<{ cleanup: () => void }> = [];
  const config = () => {
    const cfg = tempConfigDir('opsctl-embedded-socket-');
    dirs.push(cfg);
    return cfg.dir;
  };
  afterEach(() => {
    for (const d of dirs.splice(0)) d.cleanup();
  });

  it('a list is answered in-process: no node:http, dns or cluster is loaded (what a listen needs), and what an earlier command made is listed', async () => {
    const dir = config();
    for (const name of ['bug', 'chore'])
      expect((await runBin(['tracker', 'labels', 'create', '--name', name], { env: { OPSCTL_CONFIG_DIR: dir } })).exitCode).toBe(0);
    const r = await execa(process.execPath, ['--require', HOOKS, BIN, 'tracker', 'labels', 'list', '--json=name'], {
      env: { OPSCTL_CONFIG_DIR: dir, OPSCTL_RECORD_MODULES: '1' },
      reject: false,
    });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(JSON.parse(String(r.stdout))).toEqual([{ name: 'bug' }, { name: 'chore' }]);
    const builtins = JSON.parse(/^builtins (.*)$/m.exec(String(r.stderr))?.[1] ?? 'null') as string[];
    // the record is there: the state file was read (through node:fs: a list loads no fs/promises, startup.test.ts)
    expect(builtins).toContain('fs');
    // (node:net itself is loaded here anyway: stdout and stderr are pipes, which Node writes through node:net)
    expect(builtins.filter((m) => ['http', '_http_server', 'dns', 'cluster'].includes(m))).toEqual([]);
  }, 60_000);

  it('an upload streams over a socket opened for it, into the same state: the next command lists the file', async () => {
    const dir = config();
    const file = join(dir, 'notes.txt');
    writeFileSync(file, 'hello from the embedded upload\n');
    const up = await runBin(['tracker', 'files', 'upload', file, '--json=name,size'], { env: { OPSCTL_CONFIG_DIR: dir } });
    expect(up.exitCode, String(up.stderr)).toBe(0);
    expect(JSON.parse(String(up.stdout))).toEqual([{ name: 'notes.txt', size: 31 }]);
    const list = await runBin(['tracker', 'files', 'list', '--json=name'], { env: { OPSCTL_CONFIG_DIR: dir } });
    expect(list.exitCode, String(list.stderr)).toBe(0);
    expect(JSON.parse(String(list.stdout))).toEqual([{ name: 'notes.txt' }]);
  }, 60_000);

  it.skipIf(!haveChromium)(
    'login in real Chromium: the authorization URL is a listening socket; the tokens then work in-process',
    async () => {
      const env = { OPSCTL_CONFIG_DIR: config() };
      const child = runBin(['login', '--no-browser', '--scopes', 'openid', 'email', 'media.readonly', '--timeout', '2m'], { env });
      const url = await authorizationUrl(child, /(http:\/\/127\.0\.0\.1:\d+\/o\/oauth2\/v2\/auth\?\S+)/);
      await withChromiumPage(async (page) => {
        await page.goto(url);
        await page.locator('input[data-email="alice@example.com"]').check();
        await page.locator('input[data-scope$="/media.readonly"]').check();
        await Promise.all([page.waitForURL(/^http:\/\/127\.0\.0\.1:\d+\/\?code=/), page.locator('#allow').click()]);
        await page.locator('#result').waitFor({ timeout: 15_000 });
        expect(await page.locator('#result').textContent()).toBe('Signed in to opsctl');
      });
      const done = await child;
      expect(done.exitCode, String(done.stderr)).toBe(0);
      expect(String(done.stdout)).toContain('alice@example.com');
      // the next command's mock answers in-process (a virtual origin): the same state, the same tokens
      const api = await runBin(['api', '/media/v3/channels', '-f', 'part=snippet', '-f', 'mine=true'], { env });
      expect(api.exitCode, String(api.stderr)).toBe(0);
      expect(JSON.parse(String(api.stdout)).items[0].snippet.title).toBe("alice's channel");
    },
    180_000,
  );
});
