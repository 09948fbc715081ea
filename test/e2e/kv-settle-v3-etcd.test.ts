import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type RealTestCluster } from '../framework/index.js';
import { etcdLadderDirs, PINNED_ETCD } from '../helpers/etcd-releases.js';

const dirs = etcdLadderDirs();
const MB = 1000 * 1000;

/**
 * --settle auto on a cluster of 100 MB of v3 data and a tiny v2 store (etcd's own membership writes):
 * the production path (command driver, `trial: sh -s` as `ssh {host} sudo sh -s` on a real host), on
 * 3.4 → 3.5, where the members serve no v2 API and no figure from before 3.4 is carried. The v2 store is
 * measured in each member's WAL on its host (no v2 snapshot file yet: etcd's default snapshot-count), its
 * v2 writes only: no 2-minute wait between members, where counting every WAL byte took 100 MB of v3
 * values for v2 data (two blind settles per hop).
 */
describe.runIf(Boolean(dirs))(`--settle auto beside 100 MB of v3 data (real etcd: Debian's 3.4 → ${PINNED_ETCD['3.5']})`, () => {
  let c: RealTestCluster;
  let file: string;
  const opsctl = (...args: string[]) => c.opsctl(...args);

  beforeAll(async () => {
    c = await startCluster({
      members: 'real',
      size: 3,
      version: '3.4',
      file: { extra: ['trial: sh -s'] },
      timeout: 900_000,
      snapshotCount: 'etcd',
      bins: { '3.4': dirs!.v34, '3.5': dirs!.v35 },
      extraConfig: () => 'quota-backend-bytes: 8589934592',
    });
    file = c.file;
    // 100 values of 1 MB through the JSON gateway (8 at once), as v3 puts
    const value = randomBytes(750 * 1000).toString('base64');
    let next = 0;
    const put = async (i: number) => {
      const body = JSON.stringify({ key: Buffer.from(`v3/${i}`).toString('base64'), value: Buffer.from(value).toString('base64') });
      for (let t = 0; t < 5; t++) {
        const r = await fetch(`${c.endpoints[i % 3]}/v3/kv/put`, { method: 'POST', body }).catch(() => undefined);
        await r?.text();
        if (r?.status === 200) return;
      }
      throw new Error(`put ${i} failed`);
    };
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < 100) await put(next++);
      }),
    );
  }, 600_000);

  afterAll(() => c?.destroy());

  it("each member's WAL holds the 100 MB of v3 values; the settle between members measures its v2 writes there: no wait", async () => {
    for (const m of c.members) {
      const walBytes = Number(
        execFileSync('sh', ['-c', `cat "$1"/*.wal | tr -d '\\000' | wc -c`, 'sh', join(m.dir, 'data', 'member', 'wal')])
          .toString()
          .trim(),
      );
      expect(walBytes).toBeGreaterThan(100 * MB);
    }
    const r = await opsctl('kv', 'upgrade', '--to', '3.5', '--yes', '--no-backup', '--cluster', file, '--target-bin', `3.5=${dirs!.v35}`, '--json');
    expect(r.exitCode, String(r.stderr).slice(-3000)).toBe(0);
    const rep = JSON.parse(String(r.stdout));
    const settles = rep.steps.filter((s: { kind: string }) => s.kind === 'settle');
    expect(settles).toHaveLength(3);
    for (const s of settles.slice(0, 2)) {
      const m =
        /^0 ms \(v2 data (\d+) bytes \(measured on (etcd\d)'s host: (\d+) v2 writes in its WAL \(\d+ files?\), no v2 snapshot yet; v3 requests not counted; an upper bound\): under 50 MB, no catch-up wait\)$/.exec(
          s.detail,
        );
      expect(m, s.detail).not.toBeNull();
      // etcd's own v2 writes (each member's attributes, the cluster version): bytes, not megabytes
      expect(Number(m![1])).toBeLessThan(10_000);
      expect(Number(m![3])).toBeGreaterThan(0);
    }
    expect(settles[2].detail).toMatch(/the last member of this hop/);
  }, 900_000);
});
