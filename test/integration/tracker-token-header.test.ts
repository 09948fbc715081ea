import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MockAgent } from 'undici';
import { runCli, tempConfigDir } from '../helpers/cli.js';
import { startMock } from '../helpers/mock.js';
import { trackerTokenHeader } from '../../src/tracker/token-header.js';

const TOKEN = 'sc-secret-token-0123456789';
const REAL = 'https://api.app.shortcut.com';

let agent: MockAgent;
let cfg: ReturnType<typeof tempConfigDir>;
beforeEach(() => {
  agent = new MockAgent();
  agent.disableNetConnect();
  cfg = tempConfigDir();
});
afterEach(async () => {
  agent.assertNoPendingInterceptors();
  await agent.close();
  cfg.cleanup();
});

/** Intercepts one GET /api/v3/labels on `origin` and records the request headers it carried. */
function labelsOnce(origin: string): Record<string, string> {
  const seen: Record<string, string> = {};
  agent
    .get(origin)
    .intercept({ path: '/api/v3/labels', method: 'GET' })
    .reply(200, (opts) => {
      for (const [k, v] of Object.entries(opts.headers as Record<string, string>)) seen[k.toLowerCase()] = String(v);
      return [];
    });
  return seen;
}

describe('the tracker token header', () => {
  it('picks Shortcut-Token for the real host and Tracker-Token elsewhere; the setting overrides', () => {
    expect(trackerTokenHeader(REAL)).toBe('Shortcut-Token');
    expect(trackerTokenHeader('https://shortcut.com')).toBe('Shortcut-Token');
    expect(trackerTokenHeader('https://tracker.example.com')).toBe('Tracker-Token');
    expect(trackerTokenHeader('https://notshortcut.com')).toBe('Tracker-Token');
    expect(trackerTokenHeader('http://127.0.0.1:8080')).toBe('Tracker-Token');
    expect(trackerTokenHeader('http://127.0.0.1:8080', 'shortcut-token')).toBe('Shortcut-Token');
    expect(trackerTokenHeader(REAL, 'Tracker-Token')).toBe('Tracker-Token');
  });

  it('sends Shortcut-Token to api.app.shortcut.com with no setting, and --debug redacts it', async () => {
    const seen = labelsOnce(REAL);
    const r = await runCli(['tracker', 'labels', 'list', '--json', '--debug'], {
      env: { OPSCTL_CONFIG_DIR: cfg.dir, OPSCTL_TRACKER_URL: REAL, OPSCTL_TRACKER_TOKEN: TOKEN },
      dispatcher: agent,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(seen['shortcut-token']).toBe(TOKEN);
    expect(seen['tracker-token']).toBeUndefined();
    expect(r.stderr).toMatch(/shortcut-token":"\[redacted\]"/i);
    expect(r.stderr + r.stdout).not.toContain(TOKEN);
  });

  it('a profile setting tracker_token_header changes the header; --debug redacts Tracker-Token too', async () => {
    const env = { OPSCTL_CONFIG_DIR: cfg.dir, OPSCTL_TRACKER_TOKEN: TOKEN };
    expect((await runCli(['config', 'set', 'tracker', 'https://proxy.example.com', '--profile', 'work'], { env })).code).toBe(0);
    expect((await runCli(['config', 'set', 'tracker_token_header', 'Shortcut-Token', '--profile', 'work'], { env })).code).toBe(0);
    const seen = labelsOnce('https://proxy.example.com');
    const r = await runCli(['tracker', 'labels', 'list', '--json', '--profile', 'work'], { env, dispatcher: agent });
    expect(r.code, r.stderr).toBe(0);
    expect(seen['shortcut-token']).toBe(TOKEN);

    const other = labelsOnce('https://tracker.example.com');
    const d = await runCli(['tracker', 'labels', 'list', '--json', '--debug'], {
      env: { ...env, OPSCTL_TRACKER_URL: 'https://tracker.example.com' },
      dispatcher: agent,
    });
    expect(d.code, d.stderr).toBe(0);
    expect(other['tracker-token']).toBe(TOKEN);
    expect(d.stderr).toMatch(/tracker-token":"\[redacted\]"/i);
    expect(d.stderr).not.toContain(TOKEN);
  });

  it('refuses an unknown header name in config and in the environment (exit 2, naming the choices)', async () => {
    const env = { OPSCTL_CONFIG_DIR: cfg.dir, OPSCTL_TRACKER_TOKEN: TOKEN };
    const bad = await runCli(['config', 'set', 'tracker_token_header', 'X-Token'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/tracker_token_header.*Shortcut-Token, Tracker-Token/);
    const badEnv = await runCli(['tracker', 'labels', 'list'], {
      env: { ...env, OPSCTL_TRACKER_URL: REAL, OPSCTL_TRACKER_TOKEN_HEADER: 'X-Token' },
      dispatcher: agent,
    });
    expect(badEnv.code).toBe(2);
    expect(badEnv.stderr).toContain('OPSCTL_TRACKER_TOKEN_HEADER');
  });

  it('the mock accepts either header and refuses a wrong token under both names', async () => {
    const mock = await startMock({ services: ['tracker'] });
    try {
      for (const name of ['Tracker-Token', 'Shortcut-Token']) {
        const ok = await fetch(`${mock.url}/api/v3/labels`, { headers: { [name]: mock.trackerToken } });
        expect(ok.status).toBe(200);
        const wrong = await fetch(`${mock.url}/api/v3/labels`, { headers: { [name]: 'nope' } });
        expect(wrong.status).toBe(401);
      }
    } finally {
      await mock.close();
    }
  });
});
