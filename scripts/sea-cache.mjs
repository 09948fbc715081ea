// The code V8 compiles for dist/'s chunks at package time, which the single executable carries (its `cache/`
// assets, bin/sea.cjs): the start-up commands are run once each through scripts/sea-warm.cjs, with an
// environment of their own (an empty home, config and cache; PATH alone of this one), so nothing of the
// build machine's user, configuration or secrets is there to be compiled in, under a neutral script name.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const WARM = fileURLToPath(new URL('./sea-warm.cjs', import.meta.url));

/** The command lines baked: the ones start-up budgets are kept for, and the verbs an operator runs on a host. */
export const BAKED_COMMANDS = [
  // (`--no-input` before a --help: through the CLI, which a terminal of a width the build did not render
  // the help for still takes; bin/help.cjs prints the rendered texts without it)
  ['--no-input', '--help'],
  ['tracker', 'labels', 'list'],
  ['--no-input', 'tracker', '--help'],
  ['--no-input', 'labels', '--help'],
  ['--no-input', 'kv', '--help'],
  ['--no-input', 'kv', 'upgrade', '--help'],
  // with nobody signed in it exits 4: what matters is the code it ran
  ['auth', 'status'],
  ['--no-input', 'mock', '--help'],
];

/**
 * Runs the baked commands on `dist` and copies the code V8 wrote into `into`; returns the files' names
 * (`<chunk>.v8`). `extraEnv` is for the tests (what must not reach the cache).
 */
export function bakeCodeCache(dist, into, extraEnv = {}) {
  const warm = mkdtempSync(join(tmpdir(), 'opsctl-sea-cache-'));
  try {
    const home = join(warm, 'home');
    mkdirSync(home);
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      OPSCTL_CODE_CACHE: join(warm, 'code'),
      OPSCTL_CONFIG_DIR: join(warm, 'config'),
      NO_COLOR: '1',
      CI: '1',
      ...extraEnv,
    };
    for (const args of BAKED_COMMANDS) spawnSync(process.execPath, [WARM, dist, ...args], { env, stdio: 'ignore' });
    const [build] = readdirSync(join(warm, 'code'));
    const files = build ? readdirSync(join(warm, 'code', build)).filter((f) => f.endsWith('.v8')) : [];
    mkdirSync(into, { recursive: true });
    for (const f of files) copyFileSync(join(warm, 'code', build, f), join(into, f));
    return files;
  } finally {
    rmSync(warm, { recursive: true, force: true });
  }
}
