import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { startCluster, type RealTestCluster } from '../framework/index.js';
import { etcdReleaseDirs } from '../helpers/etcd-releases.js';
import { until } from '../helpers/kv.js';
import { startLoad } from '../helpers/kv-load.js';

const releases = etcdReleaseDirs();

/**
 * Zero downtime as clients see it: the load client of `npm run bench` (test/helpers/kv-load.ts: the
 * JSON gateway, failover across every member, one retry) writes and reads continuously while the
 * built binary upgrades a real 3-member etcd cluster 3.2.32 → 3.3.27. No request fails after its
 * retry and every acknowledged write is there at the end. Speed is the bench's business, not this
 * test's: it asserts only counts.
 *
 * Not in CI (vitest.config.ts runs it only under OPSCTL_PATHS=all: `npm run test:paths`): CI's
 * kv-load-ladder takes the same 3.2.32 cluster through the same hop, the command driver and this load client
 * (with opsctl's own client and etcdctl beside it) and on to 3.6, with the same counts asserted for every hop.
 */
describe.runIf(releases)('kv upgrade under client load (real etcd 3.2.32 → 3.3.27, the built binary)', () => {
  const cfg = tempConfigDir('opsctl-kv-load-');
  let c: RealTestCluster | undefined;
  afterAll(async () => {
    await c?.destroy();
    cfg.cleanup();
  });

  it('0 requests failed after the retry, 0 acknowledged writes lost, load before, during and after', async () => {
    c = await startCluster({ members: 'real', configDir: cfg.dir, size: 3, bins: { '3.2': releases!.v32, '3.3': releases!.v33 } });
    const cl = c;
    for (const m of cl.members) cl.real.start(m, '3.2');
    const version = async (e: string) => {
      try {
        return ((await (await fetch(`${e}/version`, { signal: AbortSignal.timeout(2000) })).json()) as { etcdcluster?: string }).etcdcluster;
      } catch {
        return undefined;
      }
    };
    await until(async () => (await Promise.all(cl.endpoints.map(version))).every((v) => v === '3.2.0'), 60_000, 'the 3.2.32 cluster');
    const file = cl.clusterFile({ name: 'cluster.yaml' });

    const load = startLoad({ endpoints: cl.endpoints });
    await until(() => load.acknowledgedIn('before') >= 20, 60_000, '20 acknowledged writes before the upgrade');
    load.phase('during');
    const up = await execa(
      process.execPath,
      [BIN, 'kv', 'upgrade', '--to', '3.3', '--yes', '--no-backup', '--cluster', file, '--settle', '2s', '--poll-interval', '100ms', '--json'],
      {
        reject: false,
        env: { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1' },
        timeout: 300_000,
      },
    );
    load.phase('after');
    await until(() => load.acknowledgedIn('after') >= 20, 60_000, '20 acknowledged writes after the upgrade');
    const r = await load.stop();
    process.stderr.write(`[kv load e2e] ${JSON.stringify({ ...r, lastErrors: r.lastErrors.slice(-3) })}\n`);
    expect(up.exitCode, String(up.stderr)).toBe(0);
    expect(JSON.parse(String(up.stdout)).status).toBe('done');
    expect((await Promise.all(cl.endpoints.map(version))).every((v) => v === '3.3.0')).toBe(true);

    expect(r.failedAfterRetry, r.lastErrors.join('\n')).toBe(0);
    expect(r.lost, r.lostKeys.join(', ')).toBe(0);
    expect(r.badReads).toBe(0);
    expect(r.phases.map((p) => p.phase)).toEqual(['before', 'during', 'after']);
    const during = r.phases.find((p) => p.phase === 'during')!;
    expect(during.sent).toBeGreaterThan(0);
    expect(r.acknowledged).toBe(r.writes);
  }, 400_000);
});
