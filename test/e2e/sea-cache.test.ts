import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { seaBlob } from '../../scripts/sea-blob.mjs';
import { bakeCodeCache } from '../../scripts/sea-cache.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'opsctl-baked-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const canaries = {
  OPSCTL_TRACKER_TOKEN: 'canary-tracker-token-5f1d',
  OPSCTL_ACCESS_TOKEN: 'canary-access-token-9a2c',
  AWS_SECRET_ACCESS_KEY: 'canary-aws-secret-77e0',
};
/**
 * What no baked byte may hold: the checkout, the temporary directories (`tmp`: any path under the system's; the
 * blob's assets are dist/'s sources, whose hints name /tmp/opsctl as an example, so for it this test's own), the
 * environment's secrets, the host's name.
 */
function forbidden(tmp: string, ...more: string[]): string[] {
  const out = [ROOT.replace(/\/$/, ''), 'opsctl-sea-cache-', tmp, ...Object.values(canaries), ...more];
  if (hostname().length >= 6) out.push(hostname());
  return out;
}

// The single executable carries the code V8 compiled at package time (bin/sea.cjs's `cache/` assets): code, no
// heap state (a start-up snapshot would hold that: what the CLI read from its environment as it loaded). Baked
// here as `npm run package` bakes it, with secrets and a home of the build machine's in the environment.
describe('the code cache baked into the single executable', () => {
  const into = join(work, 'cache');
  const files = bakeCodeCache(join(ROOT, 'dist'), into, canaries);
  const bytes = files.map((f) => ({ f, text: readFileSync(join(into, f)).toString('latin1') }));

  it('is written for the start-up commands (a cache per chunk they ran)', () => {
    expect(files.length).toBeGreaterThan(10);
    expect(files).toContain('cli.cjs.v8');
    expect(readdirSync(into).length).toBe(files.length);
  });

  it('holds no path of the build machine (the checkout, its temporary directories), no secret of its environment and not its host name', () => {
    for (const { f, text } of bytes)
      for (const s of forbidden(tmpdir() === '/tmp' ? '/tmp/' : tmpdir())) expect(text.includes(s), `${f} holds ${s}`).toBe(false);
    // the chunks are named under the neutral /opsctl-sea/dist
    expect(bytes.some(({ text }) => text.includes('/opsctl-sea/dist/'))).toBe(true);
  });
});

// The whole blob `npm run package` injects (scripts/sea-blob.mjs): main script, its code cache, assets, baked code.
describe('the single executable blob', () => {
  // a home and a configuration of the "build machine" whose paths, and whose state, must stay out
  const home = join(work, 'canary-home-3e8b');
  const config = join(work, 'canary-config-d41f');
  mkdirSync(home);
  const out = join(work, 'blob-out');
  mkdirSync(out);
  const made = seaBlob(join(ROOT, 'dist'), out, { ...canaries, HOME: home, OPSCTL_CONFIG_DIR: config });

  it('is a code cache, not a start-up snapshot: the configuration asks for no heap', async () => {
    await made;
    const cfg = JSON.parse(readFileSync(join(out, 'sea-config.json'), 'utf8')) as Record<string, unknown>;
    expect(cfg).toMatchObject({ main: 'opsctl.js', useCodeCache: true });
    expect(cfg.useSnapshot).toBeUndefined();
  }, 300_000);

  it('holds no path of the build machine, no secret of its environment, not its home or configuration, and no state its baking runs made', async () => {
    const blob = readFileSync(await made).toString('latin1');
    expect(blob).toContain('/opsctl-sea/dist/'); // the baked code is in it
    // the baking runs' embedded list provisioned a tracker token in the canary configuration: state that is theirs alone
    const state = JSON.parse(readFileSync(join(config, 'data', 'mock-state.json'), 'utf8')) as { tracker: { token: string } };
    expect(state.tracker.token).toMatch(/^trk_/);
    for (const s of forbidden(work, home, config, out, 'canary-home-3e8b', 'canary-config-d41f', state.tracker.token))
      expect(blob.includes(s), `the blob holds ${s}`).toBe(false);
  }, 300_000);
});
