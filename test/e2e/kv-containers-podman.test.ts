import { execa } from 'execa';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { crashRun } from '../helpers/crash-points.js';
import { etcdImages, podmanProblem, PODMAN, type ContainerCluster, startCluster, type ContainerTestCluster } from '../framework/index.js';
import { etcdLadderDirs, PINNED_ETCD } from '../helpers/etcd-releases.js';
import { until } from '../helpers/kv.js';
import { startLoad } from '../helpers/kv-load.js';

const dirs = etcdLadderDirs();
const problem = dirs ? await podmanProblem() : undefined;
if (problem) {
  if (process.env.OPSCTL_REQUIRE_E2E === '1') throw new Error(`podman is required (OPSCTL_REQUIRE_E2E=1): ${problem}`);
  process.stderr.write(`\n*** SKIPPING the container driver e2e: ${problem} ***\n\n`);
}

/** The most members whose client port refuses a connection at once (nothing listens: the member is down), every 100 ms while `fn` runs. */
async function watchDown<T>(endpoints: string[], fn: () => Promise<T>): Promise<{ result: T; maxDown: number; checks: number }> {
  let watching = true;
  let maxDown = 0;
  let checks = 0;
  const watcher = (async () => {
    while (watching) {
      const down = await Promise.all(
        endpoints.map((e) =>
          // down: nothing listens on its client port (refused); a slow answer on a loaded machine is not down
          fetch(`${e}/health`, { signal: AbortSignal.timeout(3000) }).then(
            () => 0,
            (err: Error & { cause?: { code?: string } }) => (err.cause?.code === 'ECONNREFUSED' ? 1 : 0),
          ),
        ),
      );
      maxDown = Math.max(
        maxDown,
        down.reduce<number>((a, b) => a + b, 0),
      );
      checks++;
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  try {
    return { result: await fn(), maxDown, checks };
  } finally {
    watching = false;
    await watcher;
  }
}

/**
 * Issue 61: members that are podman containers of locally built etcd images (FROM scratch + the pinned
 * 3.5/3.6/3.7 builds), on the host network, each with a named data volume and a restart policy. One cluster
 * for the file: a member whose command carries a flag 3.6 refuses is refused before any stop; fixed, the
 * cluster goes 3.5 → 3.6 → 3.7 with a writer running and each member's data volume copied after its stop
 * (kept: --keep-backups), opsctl killed (SIGKILL) right after a replacement's create and after a stop, the
 * identical command finishing; kv backups list shows the copies with their sizes, and prune --keep 1 removes
 * the first hop's copies and the containers it kept, never the second's; kv downgrade --to 3.6 brings back
 * the kept 3.6 containers; kv rollback mid-hop starts the kept container again.
 */
describe.runIf(Boolean(dirs) && !problem)(`the container driver on real podman (${PINNED_ETCD['3.5']} → ${PINNED_ETCD['3.7']})`, () => {
  const cfg = tempConfigDir('opsctl-containers-e2e-');
  let cluster: ContainerTestCluster | undefined;
  let c: ContainerCluster;
  let file: string;
  let images: Record<'3.5' | '3.6' | '3.7', string>;
  const env = { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1' };
  const opsctl = (...args: string[]) => execa(process.execPath, [BIN, ...args], { reject: false, env, extendEnv: true, timeout: 600_000 });
  const healthy = async () => (await opsctl('kv', 'health', '--cluster', file)).exitCode === 0;
  const ids = async () => Promise.all(c.members.map(async (m) => (await c.inspect(m.container))?.Id));

  beforeAll(async () => {
    images = await etcdImages(dirs!);
    // c2 is started as an old install left it: --enable-v2, which 3.5 takes and 3.6 does not know
    cluster = await startCluster({
      members: 'container',
      size: 3,
      image: images['3.5'],
      extra: (n) => (n === 'c2' ? ['--enable-v2=true'] : []),
      images: images,
      configDir: cfg.dir,
      // (a new cluster answers healthy before its cluster version is set: 3.0 until the leader raises it)
      ready: 'version',
    });
    c = cluster.container;
    file = cluster.file;
  }, 300_000);

  afterAll(async () => {
    await cluster?.destroy();
    cfg.cleanup();
  }, 60_000);

  it("a container whose command carries a flag 3.6 refuses: refused before any stop, in the image's own words", async () => {
    const before = await ids();
    const r = await opsctl('kv', 'upgrade', '--to', '3.7', '--yes', '--no-backup', '--cluster', file);
    const err = String(r.stderr);
    expect(r.exitCode, err).toBe(1);
    expect(err).toMatch(/\[enable-v2-gone\][^\n]*c2/);
    // the proof: the 3.6 image with c2's own command, on a copy of its volume, no network
    expect(err).toMatch(/\[trial-start\] member c2: [^\n]*flag provided but not defined: -enable-v2/);
    expect(err).toContain('nothing was stopped or changed');
    expect(await ids()).toEqual(before);
    expect((await c.names()).filter((n) => n.includes('.opsctl-'))).toEqual([]);
    expect(existsSync(join(cfg.dir, 'data', 'kv', 'journals'))).toBe(false);
  }, 300_000);

  it(`fixed, the cluster goes to ${PINNED_ETCD['3.7']} container by container with a writer running; opsctl killed after a create and after a stop, the identical command finishes; 0 acknowledged writes lost, never two members down`, async () => {
    // the operator's fix: c2's container made again without the flag, on its own volume
    const c2 = c.members[1]!;
    const cmd = (await execa(PODMAN, ['container', 'inspect', '--format', '{{json .Config.CreateCommand}}', c2.container])).stdout;
    const create = (JSON.parse(cmd) as string[]).slice(1).filter((w) => w !== '--enable-v2=true');
    await execa(PODMAN, ['rm', '--force', c2.container]);
    await execa(PODMAN, create);
    await until(healthy, 60_000, 'c2 back without --enable-v2');
    for (let i = 0; i < 20; i++) expect((await opsctl('kv', 'put', '--cluster', file, `ct/${i}`, `value ${i}`)).exitCode).toBe(0);
    const load = startLoad({ endpoints: c.endpoints });
    await until(() => load.acknowledgedIn('before') >= 20, 60_000, '20 acknowledged writes before the upgrade');
    const args = ['kv', 'upgrade', '--to', '3.7', '--yes', '--keep-backups', '--cluster', file];
    const t0 = Date.now();
    const { result, maxDown, checks } = await watchDown(c.endpoints, async () => {
      // killed right after the first replacement's create (the old container kept, the new one not started)
      const k1 = await crashRun(args, { ...env, OPSCTL_CRASH_AT: '* after container-create * (changes)' });
      expect(k1.signal, k1.stderr).toBe('SIGKILL');
      // the whole ladder ran first on a clone of the containers (kv/containers/clone.ts), none of it left
      expect(k1.stderr).toMatch(/rehearsal: passed on a clone of the cluster in [\d.]+ s[^\n]*3\.5 → 3\.6, 3\.6 → 3\.7/);
      expect((await c.names()).filter((n) => n.includes('.opsctl-clone-'))).toEqual([]);
      const kept = (await c.names()).filter((n) => n.includes('.opsctl-kept-'));
      expect(kept).toHaveLength(1);
      // the identical command, killed right after the next stop
      const k2 = await crashRun(args, { ...env, OPSCTL_CRASH_AT: '* after stop * (changes)' });
      expect(k2.signal, k2.stderr).toBe('SIGKILL');
      return crashRun(args, env, 600_000);
    });
    const upMs = Date.now() - t0;
    load.phase('3.7');
    await until(() => load.acknowledgedIn('3.7') >= 10, 60_000, '10 acknowledged writes on 3.7');
    expect(result.exitCode, result.stderr).toBe(0);
    const v = JSON.parse(String((await opsctl('kv', 'version', '--cluster', file, '--json')).stdout)) as Array<Record<string, string>>;
    for (const m of v) expect(m).toMatchObject({ server: PINNED_ETCD['3.7'], cluster: '3.7.0' });
    for (const m of c.members) {
      const now = await c.inspect(m.container);
      expect(now?.ImageName).toBe(images['3.7']);
      expect(now?.State.Running).toBe(true);
    }
    // the way back of each member: its 3.5 and its 3.6 container, kept (stopped)
    expect((await c.names()).filter((n) => n.includes('.opsctl-kept-'))).toHaveLength(6);
    const r = await load.stop();
    process.stderr.write(
      `[kv containers e2e] upgrade (3 runs, 2 killed) ${upMs} ms; at most ${maxDown} down in ${checks} looks; writes acknowledged ${r.acknowledged}, lost ${r.lost}, failed after the retry ${r.failedAfterRetry}\n`,
    );
    expect(maxDown).toBeLessThanOrEqual(1);
    expect(r.lost, r.lostKeys.join(', ')).toBe(0);
    expect(r.badReads).toBe(0);
    for (let i = 0; i < 20; i++) expect(String((await opsctl('kv', 'get', '--cluster', file, `ct/${i}`)).stdout).trim()).toBe(`value ${i}`);
  }, 900_000);

  it("each stop copied the member's volume: listed with its size; prune --keep 1 removes the first hop's copies and kept containers, never the second's", async () => {
    type Row = { run: string; kind: string; member: string; bytes: number | null; path: string; host: string };
    const list = async () => JSON.parse(String((await opsctl('kv', 'backups', 'list', '--json')).stdout)) as Row[];
    const copies = (await list()).filter((r) => r.kind === 'host-copy');
    const runs = [...new Set(copies.map((r) => r.run))].sort();
    // one run per hop, a copy of each member's volume in each, each a volume of its own, measured there
    expect(runs).toHaveLength(2);
    for (const run of runs)
      expect(
        copies
          .filter((r) => r.run === run)
          .map((r) => r.member)
          .sort(),
      ).toEqual(['c1', 'c2', 'c3']);
    for (const r of copies) {
      expect(r.path).toMatch(/\.opsctl-backup-\d{8}T\d{6}-[0-9a-f]+/);
      expect(r.bytes).toBeGreaterThan(0);
      // sparse: the WAL's 64 MB preallocated segment is holes in the copy
      expect(r.bytes).toBeLessThan(48 * 1024 * 1024);
    }
    process.stderr.write(`[kv containers e2e] volume copies listed: ${copies.map((r) => `${r.member} ${r.bytes} B`).join(', ')}\n`);
    const volumesBefore = await c.volumes();
    expect(volumesBefore.filter((v) => v.includes('.opsctl-backup-'))).toHaveLength(6);
    const keptBefore = new Map<string, string>();
    for (const n of (await c.names()).filter((x) => x.includes('.opsctl-kept-'))) keptBefore.set(n, (await c.inspect(n))!.ImageName);
    const pruned = await opsctl('kv', 'backups', 'prune', '--cluster', file, '--keep', '1', '--yes', '--json');
    expect(pruned.exitCode, String(pruned.stderr)).toBe(0);
    const out = JSON.parse(String(pruned.stdout)) as { containers: { removed: Array<{ name: string; removed: boolean }> } };
    // the first hop's run kept the 3.5 containers: they go with its copies; the second's (3.6) stay, its way back
    const gone = [...keptBefore].filter(([, image]) => image === images['3.5']).map(([n]) => n);
    expect(out.containers.removed.map((x) => x.name).sort()).toEqual(gone.sort());
    expect(out.containers.removed.every((x) => x.removed)).toBe(true);
    const keptAfter = (await c.names()).filter((x) => x.includes('.opsctl-kept-'));
    expect(keptAfter.sort()).toEqual(
      [...keptBefore]
        .filter(([, image]) => image === images['3.6'])
        .map(([n]) => n)
        .sort(),
    );
    const backupVolumes = (await c.volumes()).filter((v) => v.includes('.opsctl-backup-'));
    expect(backupVolumes).toHaveLength(3);
    for (const v of backupVolumes) expect(v).toContain(runs[1]);
    const left = (await list()).filter((r) => r.kind === 'host-copy');
    expect(left.map((r) => r.run)).toEqual([runs[1], runs[1], runs[1]]);
  }, 300_000);

  it('kv downgrade --to 3.6 brings back the kept 3.6 containers', async () => {
    const kept36 = new Map<string, string>();
    for (const n of (await c.names()).filter((x) => x.includes('.opsctl-kept-'))) {
      const k = await c.inspect(n);
      if (k?.ImageName === images['3.6']) kept36.set(n.split('.opsctl-kept-')[0]!, k.Id);
    }
    expect(kept36.size).toBe(3);
    const down = await opsctl('kv', 'downgrade', '--to', '3.6', '--yes', '--no-backup', '--cluster', file, '--json');
    expect(down.exitCode, String(down.stderr)).toBe(0);
    expect(JSON.parse(String(down.stdout))).toMatchObject({ kind: 'downgrade', status: 'done', from: '3.7', to: '3.6' });
    for (const m of c.members) {
      const now = await c.inspect(m.container);
      expect(now?.Id).toBe(kept36.get(m.container));
      expect(now?.State.Running).toBe(true);
    }
    const v = JSON.parse(String((await opsctl('kv', 'version', '--cluster', file, '--json')).stdout)) as Array<Record<string, string>>;
    for (const m of v) expect(m).toMatchObject({ server: PINNED_ETCD['3.6'], cluster: '3.6.0' });
    for (let i = 0; i < 20; i++) expect(String((await opsctl('kv', 'get', '--cluster', file, `ct/${i}`)).stdout).trim()).toBe(`value ${i}`);
  }, 600_000);

  it('kv rollback mid-hop (opsctl killed after the first start on 3.7): the kept 3.6 container runs again', async () => {
    const before = await ids();
    const k = await crashRun(['kv', 'upgrade', '--to', '3.7', '--yes', '--cluster', file], { ...env, OPSCTL_CRASH_AT: '* after start * (changes)' });
    expect(k.signal, k.stderr).toBe('SIGKILL');
    const on37: ContainerCluster['members'] = [];
    for (const m of c.members) if ((await c.inspect(m.container))?.ImageName === images['3.7']) on37.push(m);
    expect(on37).toHaveLength(1);
    // its 3.6 container was copied after its stop, and kept
    expect((await c.volumes()).filter((v) => v.startsWith(`${on37[0]!.container}.opsctl-backup-`)).length).toBeGreaterThan(0);
    const back = await opsctl('kv', 'rollback', '--cluster', file, '--json');
    expect(back.exitCode, String(back.stderr)).toBe(0);
    expect(JSON.parse(String(back.stdout))).toMatchObject({ status: 'rolled-back', members: [{ name: on37[0]!.name, to: '3.6' }] });
    // every member in the container it ran in before the upgrade (the 3.6 one, kept and started again)
    expect(await ids()).toEqual(before);
    for (const m of c.members) expect((await c.inspect(m.container))?.State.Running).toBe(true);
    const v = JSON.parse(String((await opsctl('kv', 'version', '--cluster', file, '--json')).stdout)) as Array<Record<string, string>>;
    for (const m of v) expect(m).toMatchObject({ server: PINNED_ETCD['3.6'], cluster: '3.6.0' });
  }, 600_000);
});
