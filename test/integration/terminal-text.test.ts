import { describe, expect, it } from 'vitest';
import { runCli, tempConfigDir } from '../helpers/cli.js';
import { followRedirect } from '../helpers/oauth-browser.js';
import { startMock, type TestState } from '../helpers/mock.js';
import { useTrackerMock } from '../helpers/tracker.js';

/** Any control character a terminal would obey (everything in C0/C1 and DEL but newline and tab). */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
const EVIL = 'bad\u001b[2J\u001b]0;owned\u0007 \u009b31m\u0008end';

const t = useTrackerMock((tracker) => {
  tracker.labels = [];
});

describe("a server's text on a terminal is shown, never obeyed", () => {
  it('in a table cell and a record value (and piped, the data is left as sent)', async () => {
    const made = await t.json('tracker', 'labels', 'create', '--name', 'plain');
    await t.mock.store.write((s: TestState) => {
      s.tracker.labels.find((l: any) => l.id === made.id).name = EVIL;
    });
    const tty = await runCli(['tracker', 'labels', 'list'], { env: t.env, tty: true });
    expect(tty.code, tty.stderr).toBe(0);
    expect(tty.stdout).not.toMatch(CONTROL);
    expect(tty.stdout).toContain('bad^[[2J^[]0;owned^G <U+009B>31m^Hend');
    const rec = await runCli(['tracker', 'labels', 'get', String(made.id)], { env: t.env, tty: true });
    expect(rec.stdout).not.toMatch(CONTROL);
    expect(rec.stdout).toContain('bad^[[2J');
    const piped = await runCli(['tracker', 'labels', 'list'], { env: t.env });
    expect(piped.stdout).toContain(EVIL);
  });

  it("in a server's error message", async () => {
    t.mock.inject({ method: 'GET', path: '/api/v3/labels', status: 422, message: EVIL, times: 1 });
    const r = await runCli(['tracker', 'labels', 'list'], { env: t.env, tty: true });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('bad^[[2J^[]0;owned^G');
    expect(r.stderr).not.toMatch(CONTROL);
  });

  it("in the login callback's error_description", async () => {
    const mock = await startMock({ services: ['oauth', 'api'] });
    const cfg = tempConfigDir();
    try {
      const r = await runCli(['login'], {
        env: { OPSCTL_CONFIG_DIR: cfg.dir, OPSCTL_AUTH_URL: mock.url, OPSCTL_API_URL: mock.url, DISPLAY: ':99' },
        tty: true,
        openBrowser: async (url) => {
          void (async () => {
            // the authorization server sends the browser back with an error carrying escape sequences
            const u = new URL(url);
            const back = new URL(u.searchParams.get('redirect_uri')!);
            back.searchParams.set('error', 'server_error');
            back.searchParams.set('error_description', EVIL);
            back.searchParams.set('state', u.searchParams.get('state')!);
            await followRedirect(back.toString()).catch(() => undefined);
          })();
          return true;
        },
      });
      expect(r.code).toBe(4);
      expect(r.stderr).toContain('the authorization server refused: server_error (bad^[[2J^[]0;owned^G <U+009B>31m^Hend)');
      expect(r.stderr).not.toMatch(CONTROL);
    } finally {
      cfg.cleanup();
      await mock.close();
    }
  });
});
