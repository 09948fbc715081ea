import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempConfigDir } from '../helpers/cli.js';
import { startMock } from '../helpers/mock.js';
import { PtySession, ptyAvailable } from '../helpers/pty.js';

/**
 * Seed 000, ownership verification: "allow a few minutes after granting access". `mock serve
 * --ownership-delay` makes access granted on a store listing invisible to verification for that long (409
 * with retry_after), and `mock clients verify` tries again when told, with a countdown, within --wait.
 * The delay here is 2 s of real time; the deadlines are generous.
 */
const DELAY_S = 2;
let mock: Awaited<ReturnType<typeof startMock>>;
const cfg = tempConfigDir();
let env: NodeJS.ProcessEnv;

async function admin(path: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${mock.url}/oauth2/mock${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, json: await res.json() };
}

/** An extension client and, just now, its store item published by carol: access granted this instant. */
async function freshlyGranted(n: number): Promise<string> {
  const itemId = `${'b'.repeat(31)}${String.fromCharCode(97 + n)}`;
  const c = await admin('/clients', { type: 'extension', name: `Ext ${n}`, item_id: itemId });
  expect(c.status).toBe(201);
  expect((await admin('/store/items', { item_id: itemId, publisher: 'carol@partner.example' })).status).toBe(201);
  return c.json.client_id as string;
}

beforeAll(async () => {
  mock = await startMock({ services: ['oauth'], options: { oauth: { ownershipDelaySeconds: DELAY_S } } });
  env = { OPSCTL_CONFIG_DIR: cfg.dir, OPSCTL_AUTH_URL: mock.url, NO_COLOR: '1' };
});
afterAll(async () => {
  await mock.close();
  cfg.cleanup();
});

describe('ownership verification right after access is granted', () => {
  it('the console answers 409 with retry_after (and Retry-After) until the delay has passed', async () => {
    const id = await freshlyGranted(0);
    const res = await fetch(`${mock.url}/oauth2/mock/clients/${id}/verify-ownership`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ account: 'carol@partner.example' }),
    });
    expect(res.status).toBe(409);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    const body = (await res.json()) as { retry_after: number; error_description: string };
    expect(body.retry_after).toBeLessThanOrEqual(DELAY_S);
    expect(body.error_description).toContain('allow a few minutes after granting access');
  });

  it('mock clients verify retries when told and succeeds; --wait 0 tries once and names the wait', async () => {
    const once = await runCli(['mock', 'clients', 'verify', await freshlyGranted(1), '--account', 'carol@partner.example', '--wait', '0'], { env });
    expect(once.code).toBe(1);
    expect(once.stderr).toMatch(/run the same command again in \d+ s, or give it more time with --wait/);
    const r = await runCli(['mock', 'clients', 'verify', await freshlyGranted(2), '--account', 'carol@partner.example', '--json'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json<{ ownership: { state: string } }>().ownership.state).toBe('verified');
    expect(r.stderr).toMatch(/trying again in \d+ s/);
  });

  it('a bad --wait is a usage error naming it', async () => {
    const r = await runCli(['mock', 'clients', 'verify', 'x.apps.mock', '--account', 'carol@partner.example', '--wait', 'soon'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--wait');
  });
});

describe.runIf(ptyAvailable())('on a terminal', () => {
  it('a countdown while waiting; Ctrl-C stops it (exit 130) and nothing is verified', async () => {
    const id = await freshlyGranted(3);
    // a longer wait than the delay: the person presses Ctrl-C during the countdown
    const slow = await startMock({ services: ['oauth'], options: { oauth: { ownershipDelaySeconds: 120 } } });
    try {
      const item = `${'c'.repeat(31)}a`;
      const post = (path: string, body: unknown) =>
        fetch(`${slow.url}/oauth2/mock${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(
          async (r) => (await r.json()) as { client_id?: string },
        );
      const c = await post('/clients', { type: 'extension', name: 'Slow', item_id: item });
      await post('/store/items', { item_id: item, publisher: 'carol@partner.example' });
      const pty = PtySession.opsctl(['mock', 'clients', 'verify', c.client_id!, '--account', 'carol@partner.example'], {
        env: { ...env, OPSCTL_AUTH_URL: slow.url },
      });
      await pty.waitFor(/trying again in \d+ s/);
      pty.ctrlC();
      expect(await pty.exitCode()).toBe(130);
      expect(pty.text).toContain('stopped while waiting');
    } finally {
      await slow.close();
    }
    expect(id).toMatch(/apps\.mock$/);
  }, 180_000);
});
