import { execa } from 'execa';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { etcdReleaseDirs } from '../helpers/etcd-releases.js';
import { until } from '../helpers/kv.js';
import { followLadder, startLoad } from '../helpers/kv-load.js';
import { walV2Census } from '../../src/kv/wal/v2-data.js';
import { startCluster, type SimulatedTestCluster } from '../framework/index.js';

/** Real binaries of every hop: 3.2.32/3.3.27 (global setup), Debian's 3.4, 3.5.35, 3.6.16 and 3.7.3 built by scripts/etcd-build.sh. */
const BUILDS = process.env.OPSCTL_ETCD_BUILDS ?? '/var/tmp/opsctl-etcd-builds';
const releases = etcdReleaseDirs();
const dirs = {
  '3.4': process.env.OPSCTL_ETCD_34_DIR ?? '/usr/bin',
  '3.5': process.env.OPSCTL_ETCD_35_DIR ?? join(BUILDS, 'etcd-v3.5.35-linux-amd64'),
  '3.6': process.env.OPSCTL_ETCD_36_DIR ?? join(BUILDS, 'etcd-v3.6.16-linux-amd64'),
  '3.7': process.env.OPSCTL_ETCD_37_DIR ?? join(BUILDS, 'etcd-v3.7.3-linux-amd64'),
};
const missing = Object.entries(dirs).filter(([, d]) => !existsSync(join(d, 'etcd')));
const ready = Boolean(releases) && missing.length === 0;
if (!ready) {
  const why = `missing ${missing.map(([v, d]) => `etcd ${v} in ${d}`).join(', ') || 'etcd 3.2/3.3'} (build 3.5/3.6/3.7 with scripts/etcd-build.sh)`;
  if (process.env.OPSCTL_REQUIRE_E2E === '1') throw new Error(`real etcd of every hop is required (OPSCTL_REQUIRE_E2E=1): ${why}`);
  process.stderr.write(`\n*** SKIPPING the real etcd ladder 3.2 → 3.7: ${why} ***\n\n`);
}

/**
 * Not in CI (vitest.config.ts runs it only under OPSCTL_PATHS=all: `npm run test:paths`, after the path matrix): every
 * hop of it is proven on real etcd by files CI runs: 3.2 → 3.6 under load (kv-load-ladder), 3.5 → 3.7 with a trial
 * template, monitoring and a writer (kv-paths-etcd's slice), the v2store fix (kv-v2store-etcd), the WAL read and fix
 * before 3.7 (kv-wal-dir-etcd), the rehearsal on a clone of a sandbox (kv-rehearse-etcd); the whole ladder on
 * simulated members (kv-ladder-sim). This is them in one run from the oldest minor: the costliest file CI had.
 */
describe.runIf(ready)('kv upgrade --to 3.7 on real etcd: a 3-member 3.2.32 cluster up the whole ladder (the built binary)', () => {
  const cfg = tempConfigDir('opsctl-ladder-e2e-');
  const opsctl = (...args: string[]) =>
    execa(process.execPath, [BIN, ...args], { reject: false, env: { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1' }, extendEnv: true, timeout: 600_000 });
  let c: SimulatedTestCluster | undefined;

  afterAll(async () => {
    await c?.destroy();
    cfg.cleanup();
  });

  it('3.2.32 → 3.7.3 in one run (five hops) with no flag beyond the binaries and a writer running: the v2store fix foreseen on the plan before the first stop and run before the first 3.6 start; 0 acknowledged writes lost, keys intact', async () => {
    // Members with etcd's default snapshot-count, watched by a monitoring probe that asks each one's
    // /health (as a load balancer or a liveness probe does): on 3.2-3.4 every /health is a v2 QGET
    // through raft, which the WAL keeps and 3.6 refuses to replay. opsctl's own checks ask none
    // (test/e2e/kv-load-ladder.test.ts counts them), but the probe's are there.
    c = await startCluster({ members: 'simulated', size: 3, etcdBin: releases!.v32, configDir: cfg.dir });
    for (let i = 0; i < 20; i++) expect((await opsctl('kv', 'put', `ladder/${i}`, `value ${i}`)).exitCode).toBe(0);
    const endpoints = (JSON.parse(String((await opsctl('kv', 'status', '--json')).stdout)) as Array<{ endpoint: string }>).map((m) => m.endpoint);
    for (const e of endpoints) expect((await fetch(`${e}/health`)).status).toBe(200);
    const data = (m: string) => join(cfg.dir, 'data', 'kv', 'sandbox', m, 'data');
    // (a /health answers once a quorum has the QGET: the third member's WAL may get it a moment later)
    const qgets = () => ['kv1', 'kv2', 'kv3'].map((m) => (walV2Census(data(m)) as { byMethod: Record<string, number> }).byMethod.QGET);
    await until(() => qgets().every((n) => n === 3), 60_000, 'the three QGETs in every WAL');
    expect(qgets()).toEqual([3, 3, 3]);
    const bins = [
      '--target-bin',
      `3.3=${releases!.v33}`,
      '--target-bin',
      `3.4=${dirs['3.4']}`,
      '--target-bin',
      `3.5=${dirs['3.5']}`,
      '--target-bin',
      `3.6=${dirs['3.6']}`,
      '--target-bin',
      `3.7=${dirs['3.7']}`,
    ];

    // a hop given the wrong binary, or a hop left without one: refused before anything stops
    const wrong = await opsctl('kv', 'upgrade', '--to', '3.7', '--yes', ...bins.slice(0, 8), '--target-bin', `3.7=${dirs['3.6']}`);
    expect(wrong.exitCode).toBe(1);
    expect(String(wrong.stderr)).toMatch(/--target-bin 3\.7=.*its etcd is 3\.6\.16, not 3\.7\.x/);
    const gap = await opsctl('kv', 'upgrade', '--to', '3.7', '--yes', ...bins.slice(0, 2), ...bins.slice(4));
    expect(gap.exitCode).toBe(1);
    expect(String(gap.stderr)).toContain('give --target-bin 3.4=DIR');

    // the plan, before anything stops: every member tried on every hop's binary, and the v2store step
    // foreseen from what the 3.2 data dirs hold now (read with the 3.5 binaries' etcdutl)
    const plan = await opsctl('kv', 'upgrade', '--to', '3.7', '--dry-run', ...bins);
    const text = String(plan.stdout);
    expect(plan.exitCode, String(plan.stderr)).toBe(0);
    expect(text).toMatch(/Ladder: 3\.2 → 3\.7 in 5 hops/);
    // every settings trial ran, each a start of its own; the members' data is proven by the rehearsal of the whole
    // plan on a clone of the cluster before the first stop (the sandbox's members can be cloned), not by one copy
    // per member alone: a dry run says it will run
    expect(text).toMatch(
      /Trials: 15 of 15 starts with each member's settings ran, 0 of 15 starts on a copy of each member's data ran \(not run: 15 proven by the rehearsal on a clone of the cluster instead\)/,
    );
    expect(text.match(/\[data-trial\] ok on kv1, kv2, kv3: proven by the rehearsal/g)).toHaveLength(5);
    expect(text).toMatch(
      /rehearsal: before the first stop, the whole plan \(3\.2 → 3\.3, 3\.3 → 3\.4, 3\.4 → 3\.5, 3\.5 → 3\.6, 3\.6 → 3\.7\) runs on a clone/,
    );
    // the 3.7 hop's floor, from the start: the release the 3.6 hop's binary brings
    expect(text).toMatch(/\[from-3\.6\.11\] ok: the members will run 3\.6\.16/);
    // every hop's settings trial passed on every member: one line each (each member's finding in --json)
    expect(text.match(/\[trial-start\] ok on kv1, kv2, kv3: /g)).toHaveLength(5);
    expect(text).toMatch(
      /before the first 3\.6 start: etcdutl check v2store on every member; a member with custom v2 content is restarted once on 3\.5 with snapshot-count 1/,
    );
    expect(text).toMatch(
      /before the first 3\.7 start: each member's WAL read for v2 requests after its newest snapshot \(3\.7 cannot replay them\); a member with some is restarted once on 3\.6/,
    );
    for (const m of ['kv1', 'kv2', 'kv3'])
      expect(text).toMatch(
        new RegExp(`${m}(, kv\\d)*: before the hop: now: etcdutl check v2store: Error: detected custom v2 content in WAL records; the v2store fix \\(planned`),
      );

    // a writer through the JSON gateway for the whole run (its prefix found again as each member changes version)
    const load = startLoad({ endpoints });
    await until(() => load.acknowledgedIn('before') >= 20, 60_000, '20 acknowledged writes before the ladder');
    const hops = followLadder(load, { endpoints, from: '3.2', to: ['3.3', '3.4', '3.5', '3.6', '3.7'] });
    const t0 = Date.now();
    const r = await opsctl('kv', 'upgrade', '--to', '3.7', '--yes', ...bins, '--json');
    const ladderMs = Date.now() - t0;
    await hops.stop();
    load.phase('after');
    await until(() => load.acknowledgedIn('after') >= 10, 60_000, '10 acknowledged writes after the ladder');
    const w = await load.stop();
    process.stderr.write(
      `[kv ladder 3.2→3.7 e2e] ${ladderMs} ms; writes acknowledged ${w.acknowledged}, lost ${w.lost}, failed after the retry ${w.failedAfterRetry}; per phase ${w.phases.map((p) => `${p.phase} ${p.sent}`).join(', ')}\n`,
    );
    expect(r.exitCode, String(r.stderr)).toBe(0);
    // the whole ladder, its fixes included, ran on the clone first
    expect(String(r.stderr)).toMatch(
      /rehearsal: passed on a clone of the cluster in [\d.]+ s \(copy [\d.]+ s\): 3\.2 → 3\.3, 3\.3 → 3\.4, 3\.4 → 3\.5, 3\.5 → 3\.6, 3\.6 → 3\.7, \d+ writes acknowledged, 0 lost/,
    );
    expect(w.lost, w.lostKeys.join(', ')).toBe(0);
    expect(w.badReads).toBe(0);
    // every hop saw the writer
    for (const h of ['3.2→3.3', '3.3→3.4', '3.4→3.5', '3.5→3.6', '3.6→3.7']) expect(w.phases.find((p) => p.phase === h)?.sent, h).toBeGreaterThan(0);
    const rep = JSON.parse(String(r.stdout));
    expect(rep).toMatchObject({ kind: 'ladder', status: 'done', to: '3.7' });
    expect(rep.hops.map((h: any) => `${h.from}>${h.to}:${h.status}`)).toEqual(['3.2>3.3:done', '3.3>3.4:done', '3.4>3.5:done', '3.5>3.6:done', '3.6>3.7:done']);
    // before the 3.6 hop's first stop etcdutl check v2store found the probe's QGETs; the planned fix
    // restarted each member once with snapshot-count 1, and the hop's checks ran again and passed
    const v2store = rep.checks.filter((c: any) => c.rule === 'v2store-check');
    expect(v2store.length).toBe(3);
    expect(v2store.every((c: any) => c.status === 'ok')).toBe(true);
    const err = String(r.stderr);
    for (const m of ['kv1', 'kv2', 'kv3']) expect(err).toMatch(new RegExp(`${m}: wait for a new v2 snapshot: [0-9a-f]{16}-[0-9a-f]{16}\\.snap`));
    expect(err).toMatch(/--fix-v2store round \d: etcdutl check v2store passes on every member/);
    // before the first 3.7 start: the 3.5 starts of that fix left v2 attribute PUTs after each member's newest
    // snapshot, which 3.7.3 panics replaying; each member was restarted once on 3.6 with snapshot-count 1
    const wal = rep.checks.filter((c: any) => c.rule === 'wal-v2-replay');
    expect(wal.map((c: any) => `${c.member}:${c.status}`)).toEqual(['kv1:ok', 'kv2:ok', 'kv3:ok']);
    for (const m of ['kv1', 'kv2', 'kv3']) expect(err).toContain(`${m}: start on 3.6 with snapshot-count 1`);
    expect(err).toMatch(/--fix-v2store round \d: the WAL read passes on every member/);
    // every snapshot before a stop came from the leader of the moment, as the guides take it
    for (const h of rep.hops) for (const s of h.report.snapshots) expect(s.from, JSON.stringify(s)).toBe(h.report.plan.at(-1).name);
    const v = JSON.parse(String((await opsctl('kv', 'version', '--json')).stdout));
    for (const m of v) expect(m).toMatchObject({ server: '3.7.3', cluster: '3.7.0' });
    for (let i = 0; i < 20; i++) expect(String((await opsctl('kv', 'get', `ladder/${i}`)).stdout).trim()).toBe(`value ${i}`);
  }, 900_000);
});
