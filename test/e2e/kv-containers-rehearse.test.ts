import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { etcdImages, podmanProblem, type ContainerCluster, startCluster, type ContainerTestCluster } from '../framework/index.js';
import { etcdLadderDirs, PINNED_ETCD } from '../helpers/etcd-releases.js';
import { until } from '../helpers/kv.js';
import { startLoad } from '../helpers/kv-load.js';

const dirs = etcdLadderDirs();
const problem = dirs ? await podmanProblem() : undefined;
if (problem) {
  if (process.env.OPSCTL_REQUIRE_E2E === '1') throw new Error(`podman is required (OPSCTL_REQUIRE_E2E=1): ${problem}`);
  process.stderr.write(`\n*** SKIPPING the container rehearsal e2e: ${problem} ***\n\n`);
}

const CLONE = '.opsctl-clone-';

/**
 * Issue 61 item 2 with issue 56: the rehearsal of a container cluster. The whole ladder (3.5 → 3.6 → 3.7, the
 * fix steps, each member's stop, keep, create and start) runs first on a clone: each member's container made
 * again by podman under a name of its own, from the member's own settings, on a copy of its volume, in the
 * clone's network namespace (the members' own addresses and ports, which the cluster holds at the same time).
 * The cluster's containers are untouched by it; the clone's containers are gone after it, and those of an
 * opsctl killed mid-rehearsal are removed by the next run, which rehearses and then upgrades with a writer on.
 */
describe.runIf(Boolean(dirs) && !problem)(`the rehearsal of container members (${PINNED_ETCD['3.5']} → ${PINNED_ETCD['3.7']})`, () => {
  const cfg = tempConfigDir('opsctl-containers-rehearse-');
  let cluster: ContainerTestCluster | undefined;
  let c: ContainerCluster;
  let file: string;
  let images: Record<'3.5' | '3.6' | '3.7', string>;
  const env = { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1' };
  const opsctl = (...args: string[]) => execa(process.execPath, [BIN, ...args], { reject: false, env, extendEnv: true, timeout: 900_000 });
  const ids = async () => Promise.all(c.members.map(async (m) => (await c.inspect(m.container))?.Id));
  const clones = async () => (await c.names()).filter((n) => n.includes(CLONE));

  beforeAll(async () => {
    images = await etcdImages(dirs!);
    // (a new cluster answers healthy before its cluster version is set: 3.0 until the leader raises it)
    cluster = await startCluster({ members: 'container', size: 3, image: images['3.5'], images, configDir: cfg.dir, ready: 'version' });
    c = cluster.container;
    file = cluster.file;
    for (let i = 0; i < 20; i++) expect((await opsctl('kv', 'put', '--cluster', file, `cr/${i}`, `value ${i}`)).exitCode).toBe(0);
  }, 300_000);

  afterAll(async () => {
    await cluster?.destroy();
    cfg.cleanup();
  }, 60_000);

  it('--rehearse runs the whole ladder on a clone of the containers and changes nothing of the cluster; no clone container is left', async () => {
    const before = await ids();
    const r = await opsctl('kv', 'upgrade', '--to', '3.7', '--rehearse', '--cluster', file, '--debug');
    const err = String(r.stderr);
    expect(r.exitCode, err.slice(-3000)).toBe(0);
    expect(err).toMatch(/rehearsal: passed on a clone of the cluster in [\d.]+ s[^\n]*3\.5 → 3\.6, 3\.6 → 3\.7/);
    // the clone's containers: each member's made again under its clone name, from its own settings
    expect(err).toMatch(new RegExp(`rehearsal: removed [^\\n]*${c.members[0]!.container}\\${CLONE}\\d+-\\d+`));
    expect(await ids()).toEqual(before);
    for (const m of c.members) expect((await c.inspect(m.container))?.ImageName).toBe(images['3.5']);
    expect(await clones()).toEqual([]);
    expect((await c.names()).filter((n) => n.includes('.opsctl-kept-'))).toEqual([]);
  }, 900_000);

  it('killed mid-rehearsal, its clone containers are removed by the next run, which rehearses and upgrades to 3.7 with a writer on: 0 acknowledged writes lost', async () => {
    const child = execa(process.execPath, [BIN, 'kv', 'upgrade', '--to', '3.7', '--rehearse', '--rehearsal-valid', '0s', '--cluster', file], {
      reject: false,
      env,
      extendEnv: true,
    });
    await until(async () => (await clones()).length === 3, 300_000, "the clone's three containers");
    child.kill('SIGKILL');
    await child;
    const left = await clones();
    expect(left.length).toBeGreaterThan(0);
    const load = startLoad({ endpoints: c.endpoints });
    await until(() => load.acknowledgedIn('before') >= 10, 60_000, '10 acknowledged writes before the upgrade');
    const r = await opsctl('kv', 'upgrade', '--to', '3.7', '--yes', '--no-backup', '--rehearsal-valid', '0s', '--cluster', file);
    const err = String(r.stderr);
    expect(r.exitCode, err.slice(-3000)).toBe(0);
    expect(err).toMatch(/rehearsal: passed on a clone of the cluster/);
    load.phase('3.7');
    await until(() => load.acknowledgedIn('3.7') >= 10, 60_000, '10 acknowledged writes on 3.7');
    const w = await load.stop();
    expect(w.lost, w.lostKeys.join(', ')).toBe(0);
    expect(await clones()).toEqual([]);
    for (const m of c.members) expect((await c.inspect(m.container))?.ImageName).toBe(images['3.7']);
    for (let i = 0; i < 20; i++) expect(String((await opsctl('kv', 'get', '--cluster', file, `cr/${i}`)).stdout).trim()).toBe(`value ${i}`);
    process.stderr.write(`[kv containers rehearse e2e] left by the kill: ${left.join(', ')}; writes acknowledged ${w.acknowledged}, lost ${w.lost}\n`);
  }, 1_200_000);
});
