import { describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { requireProgram } from '../helpers/e2e.js';
import { PtySession, SCRIPT } from '../helpers/pty.js';

/**
 * A confirmation that cannot be asked names why: --no-input on a real terminal is not "no terminal",
 * CI is named as CI, and a pipe as a pipe. Nothing is deleted in any of them.
 */
const hasScript = requireProgram('script (util-linux, for the pty tests)', SCRIPT);

describe.runIf(hasScript)('a confirmation opsctl may not ask for says why', () => {
  it('--no-input on a terminal, CI on a terminal, and stdin not a terminal: exit 2, the reason, nothing deleted', { timeout: 180_000 }, async () => {
    const cfg = tempConfigDir();
    try {
      const env = { OPSCTL_CONFIG_DIR: cfg.dir };
      expect((await runBin(['tracker', 'labels', 'create', '--name', 'bug'], { env })).exitCode).toBe(0);
      const noInput = PtySession.opsctl(['--no-input', 'tracker', 'labels', 'delete', 'bug'], { cols: 0, env });
      expect(await noInput.exitCode()).toBe(2);
      expect(noInput.text).toContain('Delete label 1: needs confirmation, and --no-input forbids asking');
      const ci = PtySession.opsctl(['tracker', 'labels', 'delete', 'bug'], { env: { ...env, CI: 'true' } });
      expect(await ci.exitCode()).toBe(2);
      expect(ci.text).toContain('needs confirmation, and CI is set (opsctl never asks in CI)');
      const piped = await runBin(['tracker', 'labels', 'delete', 'bug'], { env: { ...env, CI: '' } });
      expect(piped.exitCode).toBe(2);
      expect(String(piped.stderr)).toContain('needs confirmation, and standard input is not a terminal to ask on');
      const left = await runBin(['tracker', 'labels', 'list', '--json=name'], { env });
      expect(JSON.parse(String(left.stdout))).toEqual([{ name: 'bug' }]);
    } finally {
      cfg.cleanup();
    }
  });
});
