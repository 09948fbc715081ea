import { join } from 'node:path';

export interface OpsctlPaths {
  /** Where config.json and credentials.json live. */
  config: string;
  /** Where the embedded mock state, kv sandboxes and journals live. */
  data: string;
}

/** `OPSCTL_CONFIG_DIR` moves everything (tests use it); otherwise the platform's config and data dirs. */
export function resolvePaths(env: NodeJS.ProcessEnv): OpsctlPaths {
  const override = env.OPSCTL_CONFIG_DIR;
  if (override) return { config: override, data: join(override, 'data') };
  return platformPaths('opsctl');
}

/**
 * The platform's config and data directories of `name`, as env-paths 3 makes them (`envPaths(name, { suffix: '' })`,
 * which opsctl used): XDG's on Linux, ~/Library's on macOS, %APPDATA% and %LOCALAPPDATA%'s on Windows, from the
 * process's environment and home directory. Written here, so a command that never asks for them loads no node:os
 * (env-paths reads the home and temporary directories when it is loaded).
 */
function platformPaths(name: string): OpsctlPaths {
  const home = process.getBuiltinModule('node:os').homedir();
  const { env } = process;
  if (process.platform === 'darwin') {
    const library = join(home, 'Library');
    return { config: join(library, 'Preferences', name), data: join(library, 'Application Support', name) };
  }
  if (process.platform === 'win32') {
    const appData = env.APPDATA || join(home, 'AppData', 'Roaming');
    const localAppData = env.LOCALAPPDATA || join(home, 'AppData', 'Local');
    return { config: join(appData, name, 'Config'), data: join(localAppData, name, 'Data') };
  }
  return { config: join(env.XDG_CONFIG_HOME || join(home, '.config'), name), data: join(env.XDG_DATA_HOME || join(home, '.local', 'share'), name) };
}

// Shared with the mock's state file (packages/shared).
export { dirError, ensurePrivateDir } from '@opsctl/shared/private-dir.js';
