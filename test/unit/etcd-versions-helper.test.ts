import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { etcdLadderDirs, PINNED_ETCD, prepareLadderReleases } from '../helpers/etcd-releases.js';

describe('the ladder binaries helper (etcdLadderDirs / prepareLadderReleases)', () => {
  const empty = mkdtempSync(join(tmpdir(), 'opsctl-no-builds-'));
  afterAll(() => rmSync(empty, { recursive: true, force: true }));

  it("pins 3.5 ≥ 3.5.32, 3.6 ≥ 3.6.11 (the next guides' floors) and a 3.7 in scripts/etcd-versions.json", () => {
    expect(PINNED_ETCD['3.5']).toMatch(/^3\.5\.(3[2-9]|[4-9]\d)$/);
    expect(PINNED_ETCD['3.6']).toMatch(/^3\.6\.(1[1-9]|[2-9]\d)$/);
    expect(PINNED_ETCD['3.7']).toMatch(/^3\.7\.\d+$/);
  });

  it('a build cache without the releases: the 3.5/3.6/3.7 variables stay unset, and the reason is given', () => {
    const env: NodeJS.ProcessEnv = { OPSCTL_ETCD_BUILDS: empty };
    const lines = prepareLadderReleases(env);
    expect(env.OPSCTL_ETCD_35_DIR).toBeUndefined();
    expect(env.OPSCTL_ETCD_37_DIR).toBeUndefined();
    expect(lines.find((l) => l.startsWith('OPSCTL_ETCD_35_DIR'))).toContain(`${empty}/etcd-v${PINNED_ETCD['3.5']}-linux-amd64 has no etcd`);
    expect(lines.find((l) => l.startsWith('OPSCTL_ETCD_37_DIR'))).toContain(`${empty}/etcd-v${PINNED_ETCD['3.7']}-linux-amd64 has no etcd`);
  });

  it('anything missing: a loud skip (undefined), or under OPSCTL_REQUIRE_E2E=1 an error naming each variable and the fix', () => {
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(etcdLadderDirs({ OPSCTL_ETCD_36_DIR: empty })).toBeUndefined();
      expect(String(write.mock.calls[0]?.[0])).toMatch(/\*\*\* SKIPPING real etcd ladder/);
    } finally {
      write.mockRestore();
    }
    expect(() => etcdLadderDirs({ OPSCTL_REQUIRE_E2E: '1', OPSCTL_ETCD_36_DIR: empty })).toThrow(
      new RegExp(`OPSCTL_ETCD_32_DIR \\(etcd 3\\.2\\.32\\) is not set.*OPSCTL_ETCD_36_DIR=${empty} has no etcd, etcdctl, etcdutl.*scripts/etcd-build\\.sh`),
    );
  });
});
