import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { bakeCodeCache } from '../../scripts/sea-cache.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const into = mkdtempSync(join(tmpdir(), 'opsctl-baked-'));
afterAll(() => rmSync(into, { recursive: true, force: true }));

// The single executable carries the code V8 compiled at package time (bin/sea.cjs's `cache/` assets): code, no
// heap state (a start-up snapshot would hold that: what the CLI read from its environment as it loaded). Baked
// here as `npm run package` bakes it, with secrets and a home of the build machine's in the environment.
describe('the code cache baked into the single executable', () => {
  const canaries = {
    OPSCTL_TRACKER_TOKEN: 'canary-tracker-token-5f1d',
    OPSCTL_ACCESS_TOKEN: 'canary-access-token-9a2c',
    AWS_SECRET_ACCESS_KEY: 'canary-aws-secret-77e0',
  };
  const files = bakeCodeCache(join(ROOT, 'dist'), into, canaries);
  const bytes = files.map((f) => ({ f, text: readFileSync(join(into, f)).toString('latin1') }));

  it('is written for the start-up commands (a cache per chunk they ran)', () => {
    expect(files.length).toBeGreaterThan(10);
    expect(files).toContain('cli.cjs.v8');
    expect(readdirSync(into).length).toBe(files.length);
  });

  it('holds no path of the build machine (the checkout, its temporary directories), no secret of its environment and not its host name', () => {
    const forbidden = [ROOT.replace(/\/$/, ''), 'opsctl-sea-cache-', tmpdir() === '/tmp' ? '/tmp/' : tmpdir(), ...Object.values(canaries)];
    if (hostname().length >= 6) forbidden.push(hostname());
    for (const { f, text } of bytes) for (const s of forbidden) expect(text.includes(s), `${f} holds ${s}`).toBe(false);
    // the chunks are named under the neutral /opsctl-sea/dist
    expect(bytes.some(({ text }) => text.includes('/opsctl-sea/dist/'))).toBe(true);
  });
});
