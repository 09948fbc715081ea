import { join } from 'node:path';
import envPaths from 'env-paths';

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
  const p = envPaths('opsctl', { suffix: '' });
  return { config: p.config, data: p.data };
}

// Shared with the mock's state file (packages/shared).
export { dirError, ensurePrivateDir } from '@opsctl/shared/private-dir.js';
