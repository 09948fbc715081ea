import { execa } from 'execa';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { CRASH, crashRun } from '../helpers/crash-points.js';
import { etcdImages, podmanProblem, PODMAN, type ContainerCluster, startCluster, type ContainerTestCluster } from '../framework/index.js';
import { etcdLadderDirs, PINNED_ETCD } from '../helpers/etcd-releases.js';
import { until } from '../helpers/kv.js';

const dirs = etcdLadderDirs();
const problem = dirs ? await podmanProblem() : undefined;
if (problem) {
  if (process.env.OPSCTL_REQUIRE_E2E === '1') throw new Error(`podman is required (OPSCTL_REQUIRE_E2E=1): ${problem}`);
  process.stderr.write(`\n*** SKIPPING the container driver's rollback e2e: ${problem} ***\n\n`);
}

/**
 * Issue 61: the way back of container members on real podman, when a member's start on the next image fails
 * where no proof could see it. A 3-member 3.6 cluster of containers with the restart policy unless-stopped (as
 * an install under systemd or compose has them): a member whose 3.7 container exits at once is started again
 * and again by the engine, and the way back must hold it stopped before it touches the member.
 * Each time opsctl is killed right before the first member's start (its stop and its copy done and recorded), and
 * another process takes the member's client port: its 3.7 start fails ("address already in use", a fault the
 * proof, with no network of its own, cannot see); the port is let go once the way back holds the member stopped
 * (after its data is put back; before its kept container starts).
 * - `kv upgrade --on-failure rollback`, the identical command resumed: the member's 3.7 container never answers
 *   healthy, and the member is put back: its container held stopped, its data from the copy, its kept 3.6
 *   container started again.
 * - `kv rollback` after opsctl was killed right after such a start: the 3.7 container held stopped, the kept 3.6
 *   one started again.
 * Each time: the members in the containers they ran in before, every key there, the cluster healthy on 3.6.
 */
describe.runIf(Boolean(dirs) && !problem)(`the container driver's way back on real podman (a failing ${PINNED_ETCD['3.7']} start)`, () => {
  const cfg = tempConfigDir('opsctl-containers-rollback-e2e-');
  let cluster: ContainerTestCluster | undefined;
  let c: ContainerCluster;
  let file: string;
  let images: Record<'3.5' | '3.6' | '3.7', string>;
  const env = { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1' };
  const opsctl = (...a: string[]) => execa(process.execPath, [BIN, ...a], { reject: false, env, extendEnv: true, timeout: 600_000 });
  const healthy = async () => (await opsctl('kv', 'health', '--cluster', file)).exitCode === 0;
  const ids = async () => Promise.all(c.members.map(async (m) => (await c.inspect(m.container))?.Id));
  const versions = async () =>
    JSON.parse(String((await opsctl('kv', 'version', '--cluster', file, '--json')).stdout) || '[]') as Array<{ server?: string; cluster?: string }>;
  const restarts = async (name: string) => ((await c.inspect(name)) as { RestartCount?: number } | undefined)?.RestartCount ?? 0;
  /** Killed right before the first member's start (after its stop and its copy, recorded): that member (the only one stopped). */
  const stopAndCopyOne = async () => {
    const k = await crashRun(upgradeArgs(), { ...env, OPSCTL_CRASH_AT: '* before start *' });
    expect(k.signal, k.stderr).toBe('SIGKILL');
    const stopped: ContainerCluster['members'] = [];
    for (const m of c.members) if ((await c.inspect(m.container))?.State.Running === false) stopped.push(m);
    expect(stopped.map((m) => m.name)).toHaveLength(1);
    return stopped[0]!;
  };
  const upgradeArgs = () => ['kv', 'upgrade', '--to', '3.7', '--yes', '--on-failure', 'rollback', '--cluster', file];
  /** Another process on the member's client port (while the member is stopped): its next start fails, "address already in use". */
  const holdPort = async (m: ContainerCluster['members'][number]) => {
    const holder: Server = createServer((sock) => sock.destroy());
    await new Promise<void>((ok, fail) => holder.once('error', fail).listen(Number(new URL(m.clientUrl).port), '127.0.0.1', ok));
    return holder;
  };
  /** opsctl with every point it passes said in `log` (not killed). */
  const pointsRun = (a: string[], log: string) =>
    execa(process.execPath, [CRASH, ...a], { reject: false, env: { ...env, OPSCTL_CRASH_LOG: log }, extendEnv: true, timeout: 600_000 });
  /** The port let go once the run has passed `point` of the member's way back (held stopped, before its kept container starts). */
  const letGoAt = async (holder: Server, log: string, point: string) => {
    await until(() => existsSync(log) && readFileSync(log, 'utf8').includes(point), 600_000, point);
    await new Promise((ok) => holder.close(ok));
  };
  const putKeys = async (prefix: string) => {
    for (let i = 0; i < 20; i++) expect((await opsctl('kv', 'put', '--cluster', file, `${prefix}/${i}`, `value ${i}`)).exitCode).toBe(0);
  };
  const keysIntact = async (prefix: string) => {
    for (let i = 0; i < 20; i++) expect(String((await opsctl('kv', 'get', '--cluster', file, `${prefix}/${i}`)).stdout).trim()).toBe(`value ${i}`);
  };
  const backOn36 = async (before: Array<string | undefined>) => {
    // every member in the container it ran in before the upgrade (the 3.6 one, kept and started again)
    expect(await ids()).toEqual(before);
    for (const m of c.members) expect((await c.inspect(m.container))?.State.Running).toBe(true);
    await until(healthy, 120_000, 'the cluster healthy on 3.6');
    for (const v of await versions()) expect(v).toMatchObject({ server: PINNED_ETCD['3.6'], cluster: '3.6.0' });
  };

  beforeAll(async () => {
    images = await etcdImages(dirs!);
    cluster = await startCluster({
      members: 'container',
      size: 3,
      image: images['3.6'],
      images: { '3.6': images['3.6'], '3.7': images['3.7'] },
      configDir: cfg.dir,
    });
    c = cluster.container;
    file = cluster.file;
    await until(async () => (await versions()).filter((v) => v.cluster === '3.6.0').length === 3, 60_000, 'the cluster version 3.6');
  }, 300_000);

  afterAll(async () => {
    await cluster?.destroy();
    cfg.cleanup();
  }, 60_000);

  it('kv upgrade --on-failure rollback: a member whose 3.7 container keeps exiting (its port held by another process) is held stopped, its data put back from the copy, its kept 3.6 container started; every key there', async () => {
    await putKeys('of');
    const before = await ids();
    const m = await stopAndCopyOne();
    const holder = await holdPort(m);
    try {
      // the identical command resumes: the 3.7 start fails, and the put-back stops the member; the port let go then
      const log = join(cfg.dir, 'on-failure-points.log');
      const t0 = Date.now();
      const run = pointsRun(upgradeArgs(), log);
      await letGoAt(holder, log, `after restoreBackup ${m.name} (changes)`);
      const r = await run;
      const ms = Date.now() - t0;
      expect(r.exitCode, String(r.stderr)).toBe(3);
      expect(String(r.stderr)).toMatch(new RegExp(`--on-failure rollback: ${m.name} is back on 3\\.6`));
      // its 3.7 container kept (stopped: its policy starts it no more), the data it ran on kept in a volume
      const kept = (await c.names()).filter((n) => n.startsWith(`${m.container}.opsctl-kept-`));
      expect(kept).toHaveLength(1);
      const n = await restarts(kept[0]!);
      expect(n).toBeGreaterThan(0);
      expect((await c.inspect(kept[0]!))?.State.Running).toBe(false);
      expect((await c.volumes()).filter((v) => v.startsWith(`${m.container}.opsctl-failed-`))).toHaveLength(1);
      await backOn36(before);
      await keysIntact('of');
      expect(await restarts(kept[0]!)).toBe(n);
      process.stderr.write(
        `[kv containers rollback e2e] --on-failure rollback of ${m.name} (its 3.7 container started ${n} times by its policy): the resumed run ${ms} ms, exit 3\n`,
      );
      // (the kept 3.7 container is the operator's, for a look: removed here, before the next case)
      await execa(PODMAN, ['rm', ...kept]);
    } finally {
      if (holder.listening) holder.close();
    }
  }, 900_000);

  it("kv rollback after opsctl was killed right after a 3.7 start that fails (the member's port held by another process): the container is held stopped, the kept 3.6 one runs again; every key there", async () => {
    await putKeys('rb');
    const before = await ids();
    const m = await stopAndCopyOne();
    const holder = await holdPort(m);
    try {
      const k = await crashRun(upgradeArgs(), { ...env, OPSCTL_CRASH_AT: '* after start * (changes)' });
      expect(k.signal, k.stderr).toBe('SIGKILL');
      // its 3.7 container exits ("address already in use"), and its restart policy starts it again
      await until(async () => (await restarts(m.container)) >= 2, 60_000, `${m.container} started again by its policy`);
      const log = join(cfg.dir, 'rollback-points.log');
      const t0 = Date.now();
      const back = pointsRun(['kv', 'rollback', '--cluster', file, '--json'], log);
      await letGoAt(holder, log, `before start ${m.name}`);
      const r = await back;
      const ms = Date.now() - t0;
      expect(r.exitCode, String(r.stderr)).toBe(0);
      expect(JSON.parse(String(r.stdout))).toMatchObject({ status: 'rolled-back', members: [{ name: m.name, to: '3.6' }] });
      await backOn36(before);
      await keysIntact('rb');
      process.stderr.write(`[kv containers rollback e2e] kv rollback of ${m.name} after a failing start: ${ms} ms\n`);
    } finally {
      if (holder.listening) holder.close();
    }
  }, 900_000);
});
