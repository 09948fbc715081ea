import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { installed, requireProgram } from '../helpers/e2e.js';
import { startMock } from '../helpers/mock.js';
import { ptyAvailable, PtySession } from '../helpers/pty.js';
import { labelsApi, mintToken } from '../helpers/labels.js';

/**
 * `labels view ID --web` through the built binary against the mock on port 0: the label's page (the
 * mock serves it at BASE/labels/ID: a live link, public HTML naming only the id) handed to the system
 * opener, which runs a fake $BROWSER script that records it; an unknown label is the service's 404.
 */
describe('labels view ID --web', () => {
  let mock: Awaited<ReturnType<typeof startMock>>;
  const cfg = tempConfigDir('opsctl-labels-web-');
  const dir = mkdtempSync(join(tmpdir(), 'opsctl-labels-browser-'));
  const record = join(dir, 'opened.txt');
  const fake = join(dir, 'browser.sh');
  let env: NodeJS.ProcessEnv;
  let id = '';
  beforeAll(async () => {
    writeFileSync(fake, `#!/bin/sh\nprintf '%s\\n' "$1" >> '${record}'\n`);
    chmodSync(fake, 0o755);
    mock = await startMock({ services: ['labels'] });
    await mock.service('labels');
    const token = await mintToken(mock);
    const made = await labelsApi(mock, token)('POST', '/v2/labels', { labelType: 'SHARED', properties: { title: 'Open in browser' } });
    expect(made.status).toBe(200);
    id = (made.body as { id: string }).id;
    env = { OPSCTL_CONFIG_DIR: cfg.dir, OPSCTL_LABELS_URL: mock.url, OPSCTL_ACCESS_TOKEN: token };
  }, 120_000);
  afterAll(async () => {
    await mock.close();
    cfg.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  const hasXdgOpen = ['/usr/local/bin/xdg-open', '/bin/xdg-open'].some(installed) || requireProgram('xdg-open (Debian: xdg-utils)', '/usr/bin/xdg-open');

  it.runIf(hasXdgOpen)(
    "opens the label's page in $BROWSER, says so on stderr; the page is live HTML naming the label",
    async () => {
      const r = await runBin(['labels', 'view', id, '--web'], {
        env: { ...env, BROWSER: fake, CI: '', DISPLAY: '', WAYLAND_DISPLAY: '', XDG_CURRENT_DESKTOP: '', KDE_FULL_SESSION: '', GNOME_DESKTOP_SESSION_ID: '' },
      });
      expect(r.exitCode, String(r.stderr)).toBe(0);
      const url = `${mock.url}/labels/${id}`;
      expect(String(r.stderr)).toContain(`Opening ${url} in your browser (label ${id})`);
      expect(String(r.stdout)).toBe('');
      const deadline = Date.now() + 20_000;
      while (!existsSync(record) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(readFileSync(record, 'utf8').trim()).toBe(url);
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toContain('text/html');
      const html = await page.text();
      expect(html).toContain(`<h1>Label ${id}</h1>`);
      expect(html, 'the public page shows no label contents').not.toContain('Open in browser');
    },
    120_000,
  );

  it('no display and no BROWSER: nothing opened, exit 1, the address on stdout; by exact title too', async () => {
    const noDisplay = { DISPLAY: '', WAYLAND_DISPLAY: '', BROWSER: '', SSH_CONNECTION: '', CI: '' };
    const r = await runBin(['labels', 'view', 'Open in browser', '--web'], { env: { ...env, ...noDisplay } });
    expect(r.exitCode, String(r.stderr)).toBe(1);
    expect(String(r.stdout).trim()).toBe(`${mock.url}/labels/${id}`);
    expect(String(r.stderr)).toContain(`no browser can open the page of label ${id} here: there is no display (DISPLAY/WAYLAND_DISPLAY unset)`);
    expect(String(r.stderr)).not.toContain('Opening');
    const json = await runBin(['labels', 'view', id, '--web', '--json'], { env: { ...env, ...noDisplay } });
    expect(json.exitCode).toBe(1);
    expect(String(json.stdout)).toBe('');
    expect(JSON.parse(String(json.stderr))).toMatchObject({ error: { code: 'no_browser', url: `${mock.url}/labels/${id}` } });
  }, 120_000);

  it.runIf(ptyAvailable())(
    'on a terminal with no display: the address and why, never "Opening", exit 1',
    async () => {
      const pty = PtySession.opsctl(['labels', 'view', id, '--web'], {
        env: { ...env, DISPLAY: undefined, WAYLAND_DISPLAY: undefined, BROWSER: undefined, SSH_CONNECTION: undefined },
      });
      expect(await pty.exitCode()).toBe(1);
      expect(pty.text).toContain(`${mock.url}/labels/${id}`);
      expect(pty.text).toContain('no browser can open the page');
      expect(pty.text).not.toContain('Opening');
    },
    120_000,
  );

  it('an unknown label opens nothing: the 404 as any get, non-zero exit', async () => {
    const r = await runBin(['labels', 'view', 'labels/nosuchlabel0', '--web'], { env: { ...env, PATH: dir } });
    expect(r.exitCode).not.toBe(0);
    expect(String(r.stdout)).toBe('');
    expect(String(r.stderr)).not.toContain('Opening');
    const odd = await fetch(`${mock.url}/labels/${encodeURIComponent('<script>')}`);
    expect(odd.status).toBe(404);
  }, 120_000);
});
