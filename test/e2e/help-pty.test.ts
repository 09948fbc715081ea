import { describe, expect, it } from 'vitest';
import { tempConfigDir } from '../helpers/cli.js';
import { requireProgram } from '../helpers/e2e.js';
import { PtySession, SCRIPT } from '../helpers/pty.js';

/**
 * `opsctl --help` alone is printed without the command context (src/cli.ts topLevelHelp); on a real
 * terminal of any width, 0 included, it must print what the full path prints (`--no-input --help`
 * goes through main() and the context) and exit 0.
 */
const hasScript = requireProgram('script (util-linux, for the pty tests)', SCRIPT);

describe.runIf(hasScript)('opsctl --help on a real terminal', () => {
  for (const cols of [0, 40, 120]) {
    it(`at ${cols} columns: the same text as the full path, exit 0`, async () => {
      const cfg = tempConfigDir();
      try {
        const fast = PtySession.opsctl(['--help'], { cols, env: { OPSCTL_CONFIG_DIR: cfg.dir } });
        const full = PtySession.opsctl(['--no-input', '--help'], { cols, env: { OPSCTL_CONFIG_DIR: cfg.dir } });
        expect(await fast.exitCode()).toBe(0);
        expect(await full.exitCode()).toBe(0);
        expect(fast.text).toContain('Usage: opsctl [options] [command]');
        expect(fast.text).toContain('tracker');
        expect(fast.text).toBe(full.text);
      } finally {
        cfg.cleanup();
      }
    });
  }
});
