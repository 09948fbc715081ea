import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { LoginProgress } from '../../src/auth/browser-login.js';
import { showLoginProgress } from '../../src/commands/login/lib/progress.js';

function render(events: LoginProgress[]): { err: string[]; warn: string[] } {
  const out = { err: [] as string[], warn: [] as string[] };
  const show = showLoginProgress({ err: (t: string) => out.err.push(t), warn: (t: string) => out.warn.push(t) });
  for (const e of events) show(e);
  return out;
}

describe('a browser sign-in reports its steps through a callback; the verb words them', () => {
  it('the URL to open, then the wait', () => {
    const out = render([
      { kind: 'open-url', host: 'accounts.example.com', url: 'https://accounts.example.com/auth?x=1' },
      { kind: 'waiting', seconds: 300 },
    ]);
    expect(out.err).toEqual([
      'Sign in at accounts.example.com in your browser. Open this URL if no browser appears:\n\n  https://accounts.example.com/auth?x=1\n',
      'Waiting for the browser (up to 300 s)…',
    ]);
    expect(out.warn).toEqual([]);
  });

  it('no browser: why, the mock hint only for a local mock, and where the redirect goes', () => {
    const remote = render([{ kind: 'no-browser', reason: 'this is an SSH session', local: false, redirectUri: 'http://127.0.0.1:8765/callback' }]);
    expect(remote.err[0]).toBe('Not opening a browser (this is an SSH session). Open the URL above on any machine with a browser.');
    expect(remote.err.join('\n')).not.toContain('--consent-as');
    expect(remote.err[1]).toContain('http://127.0.0.1:8765/callback');
    const local = render([{ kind: 'no-browser', reason: 'CI is set', local: true, redirectUri: 'http://127.0.0.1:1/callback' }]);
    expect(local.err).toHaveLength(3);
    expect(local.err[1]).toContain('opsctl login --consent-as alice@example.com');
  });

  it('problems are warnings: a browser that would not open, a stale state, a pasted line that is not the redirect', () => {
    const out = render([{ kind: 'browser-failed' }, { kind: 'wrong-state' }, { kind: 'paste-refused', problem: 'that is not the redirect address' }]);
    expect(out.err).toEqual([]);
    expect(out.warn).toEqual([
      'could not open a browser: open the URL above yourself',
      'ignored a sign-in response with the wrong state (stale tab or forged request); still waiting',
      'that is not the redirect address; paste again, or wait for the browser',
    ]);
  });

  it('auth/ writes to no output stream itself (only warnings and --debug lines go through the narrow Notices port)', () => {
    const dir = new URL('../../src/auth/', import.meta.url);
    const writers = readdirSync(dir)
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) => (/\bio\.(err|out|success|info|progress)\(/.test(readFileSync(new URL(f, dir), 'utf8')) ? [f] : []));
    expect(writers).toEqual([]);
  });
});
