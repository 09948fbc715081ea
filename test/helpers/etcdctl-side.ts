import { execa } from 'execa';
import { join } from 'node:path';
import { BIN } from './bin.js';

/** What a run printed and how it ended. */
export interface Ran {
  exitCode?: number;
  stdout: string;
  stderr: string;
}

/** A run's output for an assertion's message. */
export const says = (r: Ran) => `exit ${r.exitCode}\n${r.stdout}\n${r.stderr}`;

/**
 * opsctl (the built binary) and etcdctl (of `bin`) against the same members, each with only the
 * environment given (nothing of the test runner's: no ETCDCTL_* leaks in), for side-by-side checks.
 * `endpoints` are host:port (etcdctl's form) or URLs; `--endpoints` is added unless `env` names them.
 */
export function sideBySide(bin: string, endpoints: string[], configDir: string) {
  const eps = endpoints.join(',');
  const ctl = (args: string[], env: Record<string, string> = {}, input?: string): Promise<Ran> =>
    execa(join(bin, 'etcdctl'), [...(env.ETCDCTL_ENDPOINTS ? [] : ['--endpoints', eps]), ...args], {
      reject: false,
      extendEnv: false,
      env: { ETCDCTL_API: '3', ...env },
      timeout: 60_000,
      ...(input !== undefined ? { input } : {}),
    });
  const ops = (args: string[], env: Record<string, string> = {}, input?: string): Promise<Ran> =>
    execa(process.execPath, [BIN, 'kv', ...args, ...(env.ETCDCTL_ENDPOINTS || args.includes('--endpoints') ? [] : ['--endpoints', eps])], {
      reject: false,
      extendEnv: false,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: configDir, OPSCTL_CONFIG_DIR: configDir, NO_COLOR: '1', CI: '1', ...env },
      timeout: 120_000,
      ...(input !== undefined ? { input } : {}),
    });
  return { ctl, ops };
}

/** JSON whose integers of 16+ digits (etcdctl's uint64 ids) stay exact, as decimal strings. */
export function bigJson(text: string): unknown {
  return JSON.parse(text.replace(/([:[,]\s*)(-?\d{16,})(?=\s*[,}\]])/g, '$1"$2"'));
}

/** A decimal uint64 (number or string) in hex, as etcdctl prints ids. */
export const hexOf = (id: unknown) => BigInt(String(id)).toString(16);

/** base64 → text. */
export const unb64 = (s: unknown) => (typeof s === 'string' ? Buffer.from(s, 'base64').toString('utf8') : '');
