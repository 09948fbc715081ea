import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * No test writes into the real home directory: HOME and the XDG directories point into a temporary
 * directory for the whole run (opsctl's own files, Chromium's profile, dconf, caches). Returns the clean-up.
 */
export function isolateHome(): () => void {
  const home = mkdtempSync(join(tmpdir(), 'opsctl-test-home-'));
  const dirs = {
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_RUNTIME_DIR: join(home, 'run'),
  };
  for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true, mode: 0o700 });
  process.env.OPSCTL_TEST_REAL_HOME = process.env.HOME ?? '';
  Object.assign(process.env, dirs);
  // dconf and other session services reach the real profile through the user's session bus.
  delete process.env.DBUS_SESSION_BUS_ADDRESS;
  return () => rmSync(home, { recursive: true, force: true });
}

/** The unit tier's global setup: the temporary home only (no build, no etcd). */
export default function setup(): () => void {
  return isolateHome();
}
