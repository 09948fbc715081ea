import { execa } from 'execa';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { startCluster, type RealTestCluster } from '../framework/index.js';
import { etcdReleaseDirs } from '../helpers/etcd-releases.js';
import { until } from '../helpers/kv.js';
import { followLadder, startLoad } from '../helpers/kv-load.js';
import { walV2Census, type WalV2Census } from '../../src/kv/wal/v2-data.js';

/** Real binaries of every hop, as test/e2e/kv-ladder-etcd.test.ts finds them. */
const BUILDS = process.env.OPSCTL_ETCD_BUILDS ?? '/var/tmp/opsctl-etcd-builds';
const releases = etcdReleaseDirs();
const dirs = {
  '3.4': process.env.OPSCTL_ETCD_34_DIR ?? '/usr/bin',
  '3.5': process.env.OPSCTL_ETCD_35_DIR ?? join(BUILDS, 'etcd-v3.5.35-linux-amd64'),
  '3.6': process.env.OPSCTL_ETCD_36_DIR ?? join(BUILDS, 'etcd-v3.6.16-linux-amd64'),
};
const ETCDCTL = join(dirs['3.4'], 'etcdctl');
const missing = [...Object.entries(dirs).map(([v, d]) => [v, join(d, 'etcd')]), ['3.4 etcdctl', ETCDCTL]].filter(([, f]) => !existsSync(f!));
const ready = Boolean(releases) && missing.length === 0;
if (!ready) {
  const why = `missing ${missing.map(([v, f]) => `${v} (${f})`).join(', ') || 'etcd 3.2/3.3'} (build 3.5/3.6 with scripts/etcd-build.sh)`;
  if (process.env.OPSCTL_REQUIRE_E2E === '1') throw new Error(`real etcd of every hop is required (OPSCTL_REQUIRE_E2E=1): ${why}`);
  process.stderr.write(`\n*** SKIPPING the ladder under client load: ${why} ***\n\n`);
}

/**
 * Zero downtime as clients see it, through the whole ladder in one run: while the built binary takes a
 * real 3-member cluster started with etcd's default snapshot-count 3.2.32 → 3.3.27 → 3.4 → 3.5.35 →
 * 3.6.16 (command driver, with no flag beyond the binaries), three clients write and read continuously:
 * the JSON gateway straight (undici), opsctl's own gateway client (src/kv/cluster/client.ts, which finds each
 * member's prefix again as it changes version) and etcdctl (gRPC, one process per request). No request
 * fails after its one retry, every acknowledged write is there at the end, and every hop saw load.
 * opsctl's own checks wrote no v2 request into any WAL on any version (the census of each member's WAL
 * before and after: etcd's own membership PUTs only), so 3.6's etcdutl check v2store passes, run on each
 * host through the trial template, without the fix. Counts only: the longest gap and p99 per hop are
 * the bench's (kv-load).
 */
describe.runIf(ready)('kv upgrade --to 3.6 under client load (real etcd, the built binary)', () => {
  const cfg = tempConfigDir('opsctl-kv-load-ladder-');
  let t: RealTestCluster | undefined;
  afterAll(async () => {
    await t?.destroy();
    cfg.cleanup();
  });

  it('gateway, opsctl client and etcdctl: 0 failed after the retry, 0 acknowledged writes lost, every hop under load', async () => {
    // the command driver with a backup template (each data dir copied on its host after the stop) and a trial template
    t = await startCluster({
      members: 'real',
      size: 3,
      snapshotCount: 'etcd',
      bins: { '3.2': releases!.v32, '3.3': releases!.v33, ...dirs },
      version: '3.2',
      ready: 'version',
      configDir: cfg.dir,
      file: (real) => ({ extra: [`backup: cp -a ${real.dir}/{name}/data ${real.dir}/{name}/data.bak-{run}`, 'trial: sh -s'] }),
    });
    const cl = t.real;
    const file = t.file;
    const version = async (e: string) => {
      try {
        return ((await (await fetch(`${e}/version`, { signal: AbortSignal.timeout(2000) })).json()) as { etcdcluster?: string }).etcdcluster;
      } catch {
        return undefined;
      }
    };
    const census = () => cl.members.map((m) => walV2Census(join(m.dir, 'data')) as WalV2Census);

    const load = startLoad({ endpoints: cl.endpoints, clients: ['gateway', 'opsctl', 'etcdctl'], etcdctl: ETCDCTL });
    await until(() => load.acknowledgedIn('before') >= 30, 60_000, '30 acknowledged writes before the upgrade');
    const hops = followLadder(load, { endpoints: cl.endpoints, from: '3.2', to: ['3.3', '3.4', '3.5', '3.6'] });
    const bins = (['3.3', '3.4', '3.5', '3.6'] as const).flatMap((v) => ['--target-bin', `${v}=${v === '3.3' ? releases!.v33 : dirs[v]}`]);
    const before = census();
    for (const w of before) expect(w.custom).toBe(0);
    const up = await execa(process.execPath, [BIN, 'kv', 'upgrade', '--to', '3.6', '--yes', '--cluster', file, ...bins, '--json'], {
      reject: false,
      env: { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1' },
      timeout: 800_000,
    });
    const after = census();
    await hops.stop();
    load.phase('after');
    await until(() => load.acknowledgedIn('after') >= 30, 60_000, '30 acknowledged writes after the upgrade');
    const r = await load.stop();
    process.stderr.write(`[kv load ladder e2e] ${JSON.stringify({ ...r, lastErrors: r.lastErrors.slice(-5) })}\n`);
    expect(up.exitCode, String(up.stderr)).toBe(0);
    const rep = JSON.parse(String(up.stdout));
    expect(rep.hops.map((h: any) => `${h.from}>${h.to}:${h.status}`)).toEqual(['3.2>3.3:done', '3.3>3.4:done', '3.4>3.5:done', '3.5>3.6:done']);
    // opsctl asked no v2 request of any version: no QGET, no custom entry, in any member's WAL; only etcd's own
    // membership PUTs (each restart publishes the member's attributes; the cluster version moves)
    for (const [i, w] of after.entries()) {
      expect(w.custom, JSON.stringify(w)).toBe(0);
      expect(w.byMethod.QGET ?? 0).toBe(0);
      expect(w.membership).toBeGreaterThan(before[i]!.membership);
    }
    // and so etcdutl check v2store passed on every host before the first 3.6 start, with no fix to run
    const v2store = rep.checks.filter((c: any) => c.rule === 'v2store-check');
    expect(v2store.map((c: any) => `${c.member}:${c.status}`)).toEqual(['etcd1:ok', 'etcd2:ok', 'etcd3:ok']);
    for (const c of v2store) expect(c.detail).toMatch(/etcdutl check v2store on its host: No custom content found/);
    // every member was tried on every hop's binary (through the trial template), before the first stop
    const trials = rep.checks.filter((c: any) => c.rule === 'trial-start');
    expect(trials.filter((c: any) => c.status === 'ok').length).toBeGreaterThanOrEqual(12);
    expect((await Promise.all(cl.endpoints.map(version))).every((v) => v === '3.6.0')).toBe(true);
    // --settle auto on 3.4+ (the v2 API off): the v2 size measured on each member's host (its newest v2 snapshot
    // file, else its WAL), else the figure the ladder measured before 3.3 → 3.4; never the blind 2-minute wait
    const settles = rep.hops.slice(1).flatMap((h: any) => h.report.steps.filter((s: any) => s.kind === 'settle'));
    expect(settles.length).toBe(9);
    // between members: the carried figure on 3.4 and 3.5 (3.6 keeps no v2 store); after the last member of a hop: no wait at all
    const [between, last] = [settles.filter((_: any, i: number) => i % 3 !== 2), settles.filter((_: any, i: number) => i % 3 === 2)];
    for (const s of between.slice(0, 4))
      expect(s.detail).toMatch(
        /^0 ms \(v2 data \d+ bytes \(measured on (etcd\d's host|etcd\d \(3\.2\.32\) over its v2 API, before 3\.4 turned the v2 API off)\): under 50 MB/,
      );
    for (const s of between.slice(4)) expect(s.detail).toMatch(/^0 ms \(v2 data 0 bytes \(etcd 3\.6 keeps no v2 store\): under 50 MB/);
    for (const s of last) expect(s.detail).toMatch(/the last member of this hop/);

    expect(r.failedAfterRetry, r.lastErrors.join('\n')).toBe(0);
    expect(r.lost, r.lostKeys.join(', ')).toBe(0);
    expect(r.badReads).toBe(0);
    expect(r.acknowledged).toBe(r.writes);
    expect(r.phases.map((p) => p.phase)).toEqual(['before', '3.2→3.3', '3.3→3.4', '3.4→3.5', '3.5→3.6', 'after']);
    // every hop under load, from every kind of client
    for (const p of r.phases) for (const via of ['gateway', 'opsctl', 'etcdctl']) expect(p.byClient[via]?.sent, `${p.phase} ${via}`).toBeGreaterThan(0);
  }, 900_000);
});
