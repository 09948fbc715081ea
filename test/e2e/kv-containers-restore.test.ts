import { execa } from 'execa';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { etcdImages, podmanProblem, PODMAN, startCluster, type ContainerCluster, type ContainerTestCluster } from '../framework/index.js';
import { etcdLadderDirs, PINNED_ETCD } from '../helpers/etcd-releases.js';
import { until } from '../helpers/kv.js';
import { crashRun } from '../helpers/crash-points.js';

const dirs = etcdLadderDirs();
const problem = dirs ? await podmanProblem() : undefined;
if (problem) {
  if (process.env.OPSCTL_REQUIRE_E2E === '1') throw new Error(`podman is required (OPSCTL_REQUIRE_E2E=1): ${problem}`);
  process.stderr.write(`\n*** SKIPPING the container driver's restore e2e: ${problem} ***\n\n`);
}

/**
 * kv restore onto container members, on real podman (issue 61, item 3): a 3-member 3.6 cluster of containers whose
 * data is on named volumes; a snapshot taken, keys written after it; `kv restore` builds each member's data from the
 * snapshot with the 3.6 image's etcdutl beside its live data (nothing stopped yet), then stops every member, keeps
 * the data each had (a volume CONTAINER.opsctl-before-restore-RUN), puts the restored data in its place and starts
 * the same containers: the cluster holds the snapshot's keys and not the later ones, one new cluster, every member
 * on its own container and volume. A declined restore (--dry-run) stops nothing and leaves no volume behind.
 */
describe.runIf(Boolean(dirs) && !problem)(`kv restore onto container members on real podman (${PINNED_ETCD['3.6']})`, () => {
  const cfg = tempConfigDir('opsctl-containers-restore-e2e-');
  let cluster: ContainerTestCluster | undefined;
  let c: ContainerCluster;
  let file: string;
  const env = { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1' };
  const opsctl = (...a: string[]) => execa(process.execPath, [BIN, ...a], { reject: false, env, extendEnv: true, timeout: 600_000 });
  const healthy = async () => (await opsctl('kv', 'health', '--cluster', file)).exitCode === 0;
  const get = async (key: string) => String((await opsctl('kv', 'get', '--cluster', file, key, '--print-value-only')).stdout).trim();

  beforeAll(async () => {
    const images = await etcdImages(dirs!);
    cluster = await startCluster({ members: 'container', size: 3, image: images['3.6'], images: { '3.6': images['3.6'] }, configDir: cfg.dir });
    c = cluster.container;
    file = cluster.file;
  }, 300_000);

  afterAll(async () => {
    await cluster?.destroy();
    cfg.cleanup();
  }, 60_000);

  it("restores every member's data from one snapshot: the snapshot's keys, not the later ones; the data each had kept", async () => {
    for (let i = 0; i < 5; i++) expect((await opsctl('kv', 'put', '--cluster', file, `before/${i}`, `v${i}`)).exitCode).toBe(0);
    const snap = join(cfg.dir, 'snap.db');
    const saved = await opsctl('kv', 'snapshot', 'save', snap, '--cluster', file);
    expect(saved.exitCode, String(saved.stderr)).toBe(0);
    for (let i = 0; i < 5; i++) expect((await opsctl('kv', 'put', '--cluster', file, `after/${i}`, `w${i}`)).exitCode).toBe(0);
    const ids = await Promise.all(c.members.map(async (m) => (await c.inspect(m.container))?.Id));
    const clusterId = async () =>
      ((await (await fetch(`${c.endpoints[0]}/v3/maintenance/status`, { method: 'POST', body: '{}' })).json()) as { header?: { cluster_id?: string } }).header
        ?.cluster_id;
    const before = await clusterId();

    // --dry-run: the plan, nothing stopped, no volume made
    const volumesBefore = await c.volumes();
    const dry = await opsctl('kv', 'restore', '--cluster', file, '--snapshot', snap, '--to-version', '3.6', '--dry-run');
    expect(dry.exitCode, `${String(dry.stdout)}\n${String(dry.stderr)}`).toBe(0);
    expect(String(dry.stdout)).toMatch(/restored by \/usr\/local\/bin\/etcdutl of localhost\/opsctl-etcd:v3\.6\.\d+/);
    expect(await c.volumes()).toEqual(volumesBefore);
    expect(await healthy()).toBe(true);

    const r = await opsctl('kv', 'restore', '--cluster', file, '--snapshot', snap, '--to-version', '3.6', '--yes');
    const said = `${String(r.stdout)}\n${String(r.stderr)}`;
    expect(r.exitCode, said).toBe(0);
    await until(healthy, 120_000, 'the restored cluster healthy');
    for (let i = 0; i < 5; i++) expect(await get(`before/${i}`)).toBe(`v${i}`);
    for (let i = 0; i < 5; i++) expect(await get(`after/${i}`)).toBe('');
    expect(await clusterId()).not.toBe(before);
    // the same containers (started again, not made anew), the data each had kept in a volume of its own, no restore place left
    expect(await Promise.all(c.members.map(async (m) => (await c.inspect(m.container))?.Id))).toEqual(ids);
    const volumes = await c.volumes();
    for (const m of c.members) expect(volumes.filter((v) => v.startsWith(`${m.container}.opsctl-before-restore-`))).toHaveLength(1);
    expect(volumes.filter((v) => v.includes('.opsctl-restore-'))).toEqual([]);
    const kept = volumes.find((v) => v.startsWith(`${c.members[0]!.container}.opsctl-before-restore-`))!;
    const at = String((await execa(PODMAN, ['volume', 'inspect', '--format', '{{.Mountpoint}}', kept])).stdout).trim();
    expect((await execa('test', ['-d', `${at}/member/wal`], { reject: false })).exitCode).toBe(0);
  }, 600_000);

  it("killed (SIGKILL) right after the first member got its restored data, the identical command finishes: the second snapshot's keys on every member", async () => {
    for (let i = 0; i < 3; i++) expect((await opsctl('kv', 'put', '--cluster', file, `second/${i}`, `s${i}`)).exitCode).toBe(0);
    const snap = join(cfg.dir, 'snap2.db');
    expect((await opsctl('kv', 'snapshot', 'save', snap, '--cluster', file)).exitCode).toBe(0);
    expect((await opsctl('kv', 'put', '--cluster', file, 'third/0', 't0')).exitCode).toBe(0);
    const args = ['kv', 'restore', '--cluster', file, '--snapshot', snap, '--to-version', '3.6', '--yes'];
    const k = await crashRun(args, { ...env, OPSCTL_CRASH_AT: '* after restoreData * (changes)' });
    expect(k.signal, `${k.stdout}\n${k.stderr}`).toBe('SIGKILL');
    expect(k.stderr).toMatch(/opsctl-test: killed at .*after restoreData/);
    const r = await opsctl(...args);
    expect(r.exitCode, `${String(r.stdout)}\n${String(r.stderr)}`).toBe(0);
    // (the member whose restore ran before the kill is not restored twice: its restored data is found in place)
    expect(`${String(r.stdout)}\n${String(r.stderr)}`).toMatch(/restored already \(a resumed restore\)/);
    await until(healthy, 120_000, 'the cluster healthy after the resumed restore');
    for (const m of c.members) {
      for (let i = 0; i < 3; i++)
        expect(String((await opsctl('kv', 'get', '--endpoints', m.clientUrl, `second/${i}`, '--print-value-only')).stdout).trim()).toBe(`s${i}`);
      expect(String((await opsctl('kv', 'get', '--endpoints', m.clientUrl, 'third/0', '--print-value-only')).stdout).trim()).toBe('');
    }
    expect((await c.volumes()).filter((v) => v.includes('.opsctl-restore-'))).toEqual([]);
  }, 600_000);
});
