import envPaths from 'env-paths';
import { describe, expect, it } from 'vitest';
import { resolvePaths } from '../../src/config/paths.js';

describe('where config and data live (src/config/paths.ts)', () => {
  it("is env-paths' config and data directory when OPSCTL_CONFIG_DIR is unset (its rule, without loading it)", () => {
    const p = envPaths('opsctl', { suffix: '' });
    expect(resolvePaths({})).toEqual({ config: p.config, data: p.data });
  });

  it('is OPSCTL_CONFIG_DIR and its data/ when that is set', () => {
    expect(resolvePaths({ OPSCTL_CONFIG_DIR: '/tmp/x' })).toEqual({ config: '/tmp/x', data: '/tmp/x/data' });
  });
});
