import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { installed, requireProgram } from '../helpers/e2e.js';

/**
 * gh's --web through the built binary: `tracker stories|epics view ID --web` (view is get's gh name)
 * hands the record's app_url to the system opener (xdg-open, which runs $BROWSER where no desktop is
 * detected): a fake BROWSER script records the URL. Where nothing can open it (no display and no BROWSER, or
 * no opener to run) it fails, exit 1, with the URL on stdout for copying.
 */
const cfg = tempConfigDir('opsctl-web-e2e-');
const dir = mkdtempSync(join(tmpdir(), 'opsctl-web-browser-'));
const record = join(dir, 'opened.txt');
const fake = join(dir, 'browser.sh');
writeFileSync(fake, `#!/bin/sh\nprintf '%s\\n' "$1" >> '${record}'\n`);
chmodSync(fake, 0o755);
const env = { OPSCTL_CONFIG_DIR: cfg.dir };
afterAll(() => {
  cfg.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

/** The URLs the fake browser has been given, once it has written `count` of them (the opener runs detached). */
async function opened(count: number): Promise<string[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const lines = existsSync(record) ? readFileSync(record, 'utf8').split('\n').filter(Boolean) : [];
    if (lines.length >= count || Date.now() > deadline) return lines;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const hasXdgOpen = ['/usr/local/bin/xdg-open', '/bin/xdg-open'].some(installed) || requireProgram('xdg-open (Debian: xdg-utils)', '/usr/bin/xdg-open');

describe('tracker … view ID --web', () => {
  it.runIf(hasXdgOpen)(
    'a story and an epic open their app_url in $BROWSER; stderr says so; stdout stays empty',
    async () => {
      const urls: string[] = [];
      for (const noun of ['stories', 'epics'] as const) {
        const made = await runBin(['tracker', noun, 'create', '--name', `web ${noun}`, '--json=id,app_url'], { env });
        expect(made.exitCode, String(made.stderr)).toBe(0);
        const rec = JSON.parse(String(made.stdout)) as { id: number; app_url: string };
        expect(rec.app_url).toMatch(/^https:\/\//);
        const r = await runBin(['tracker', noun, 'view', String(rec.id), '--web'], {
          env: { ...env, BROWSER: fake, CI: '', DISPLAY: '', WAYLAND_DISPLAY: '', XDG_CURRENT_DESKTOP: '', KDE_FULL_SESSION: '', GNOME_DESKTOP_SESSION_ID: '' },
        });
        expect(r.exitCode, String(r.stderr)).toBe(0);
        expect(String(r.stderr)).toContain(`Opening ${rec.app_url} in your browser`);
        expect(String(r.stdout)).toBe('');
        urls.push(rec.app_url);
      }
      expect(await opened(2)).toEqual(urls);
    },
    120_000,
  );

  it('no display and no BROWSER: nothing is opened, exit 1, the address on stdout; BROWSER but no opener on PATH: the same', async () => {
    const made = await runBin(['tracker', 'stories', 'create', '--name', 'over ssh', '--json=id,app_url'], { env });
    const rec = JSON.parse(String(made.stdout)) as { id: number; app_url: string };
    const noDisplay = { DISPLAY: '', WAYLAND_DISPLAY: '', BROWSER: '', SSH_CONNECTION: '', CI: '' };
    const r = await runBin(['tracker', 'stories', 'view', String(rec.id), '--web'], { env: { ...env, ...noDisplay } });
    expect(r.exitCode, String(r.stderr)).toBe(1);
    expect(String(r.stdout).trim()).toBe(rec.app_url);
    expect(String(r.stderr)).toContain(`no browser can open the page of story ${rec.id} here: there is no display`);
    expect(String(r.stderr)).not.toContain('Opening');
    const noOpener = await runBin(['tracker', 'stories', 'view', String(rec.id), '--web'], { env: { ...env, ...noDisplay, BROWSER: fake, PATH: dir } });
    expect(noOpener.exitCode, String(noOpener.stderr)).toBe(1);
    expect(String(noOpener.stdout).trim()).toBe(rec.app_url);
    expect(String(noOpener.stderr)).toContain('no opener could be started');
  }, 120_000);
});
