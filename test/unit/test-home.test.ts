import { homedir, tmpdir } from 'node:os';
import { expect, it } from 'vitest';

it('tests run with HOME and the XDG directories in a temporary directory, never the real home', () => {
  const home = process.env.HOME!;
  expect(home.startsWith(tmpdir())).toBe(true);
  expect(home).toContain('opsctl-test-home-');
  expect(homedir()).toBe(home);
  expect(home).not.toBe(process.env.OPSCTL_TEST_REAL_HOME);
  for (const v of ['XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_STATE_HOME', 'XDG_CACHE_HOME', 'XDG_RUNTIME_DIR'])
    expect(process.env[v]!.startsWith(home), v).toBe(true);
  expect(process.env.DBUS_SESSION_BUS_ADDRESS).toBeUndefined();
});
