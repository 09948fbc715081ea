import { execa, type Options } from 'execa';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../bin/opsctl.cjs', import.meta.url));

/** Runs the built binary (end-to-end tests). Never rejects: look at exitCode. */
export function runBin(args: string[], opts: Options = {}) {
  return execa(process.execPath, [BIN, ...args], { reject: false, env: { NO_COLOR: '1', ...opts.env }, ...opts, extendEnv: true });
}

/**
 * The built opsctl that can stop itself at a local member's start point (test/fixtures/opsctl-paused.cjs:
 * OPSCTL_PAUSE=pause:after-spawn:#2 …), so a SIGKILL lands in that gap; without OPSCTL_PAUSE, the binary as is.
 */
export const PAUSED = fileURLToPath(new URL('../fixtures/opsctl-paused.cjs', import.meta.url));
