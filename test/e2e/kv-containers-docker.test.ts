import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { crashRun } from '../helpers/crash-points.js';
import { DOCKER, dockerViaPodman, etcdImages, podmanProblem, type ContainerCluster, startCluster, type ContainerTestCluster } from '../framework/index.js';
import { etcdLadderDirs, PINNED_ETCD } from '../helpers/etcd-releases.js';
import { until } from '../helpers/kv.js';
import { startLoad } from '../helpers/kv-load.js';

const dirs = etcdLadderDirs();
const cli = dirs ? await execa(DOCKER, ['--version'], { reject: false }) : undefined;
const problem = !dirs
  ? undefined
  : ((await podmanProblem()) ??
    (cli?.exitCode === 0 ? undefined : `no docker CLI on PATH (${cli?.failed ? String(cli.shortMessage) : `exit ${cli?.exitCode}`})`));
if (problem) {
  if (process.env.OPSCTL_REQUIRE_E2E === '1') throw new Error(`podman and a docker CLI are required (OPSCTL_REQUIRE_E2E=1): ${problem}`);
  process.stderr.write(`\n*** SKIPPING the container driver's docker e2e: ${problem} ***\n\n`);
}

/**
 * Issue 61, item 5: the same container driver against the docker CLI (`engine: docker`), here through podman's
 * Docker-compatible API (`podman system service` on a socket of this test's own, DOCKER_HOST=unix://…), as no
 * dockerd runs on this machine. The cluster is made with `docker run` (3 members of the 3.6 image, host network, a
 * named volume each, restart policy unless-stopped): docker's own inspect shape (the image in Config.Image, an
 * Entrypoint list), its `stop --timeout`, its `volume` verbs. It goes to 3.7 with a writer running and opsctl
 * killed right after a replacement's create, the identical command finishing, 0 acknowledged writes lost; `kv
 * backups list` shows the volume copies; `kv downgrade --to 3.6` brings back the kept 3.6 containers.
 */
describe.runIf(Boolean(dirs) && !problem)(`the container driver on the docker CLI (podman's Docker API; ${PINNED_ETCD['3.6']} → ${PINNED_ETCD['3.7']})`, () => {
  const cfg = tempConfigDir('opsctl-containers-docker-e2e-');
  let api: { env: Record<string, string>; stop(): Promise<void> } | undefined;
  let cluster: ContainerTestCluster | undefined;
  let c: ContainerCluster;
  let file: string;
  let images: Record<'3.5' | '3.6' | '3.7', string>;
  let env: Record<string, string> = { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1' };
  const opsctl = (...args: string[]) => execa(process.execPath, [BIN, ...args], { reject: false, env, extendEnv: true, timeout: 600_000 });
  const versions = async () =>
    JSON.parse(String((await opsctl('kv', 'version', '--cluster', file, '--json')).stdout) || '[]') as Array<{ server?: string; cluster?: string }>;

  beforeAll(async () => {
    const got = await dockerViaPodman(cfg.dir);
    if ('problem' in got) throw new Error(got.problem);
    api = got;
    env = { ...env, ...api.env };
    images = await etcdImages(dirs!);
    cluster = await startCluster({
      members: 'container',
      size: 3,
      image: images['3.6'],
      engine: { program: DOCKER, env: api.env },
      images: { '3.6': images['3.6'], '3.7': images['3.7'] },
      configDir: cfg.dir,
      env: api.env,
    });
    c = cluster.container;
    file = cluster.file;
    await until(async () => (await versions()).filter((v) => v.cluster === '3.6.0').length === 3, 60_000, 'the cluster version 3.6');
  }, 300_000);

  afterAll(async () => {
    await cluster?.destroy();
    await api?.stop();
    cfg.cleanup();
  }, 60_000);

  it(`goes to ${PINNED_ETCD['3.7']} container by container through the docker CLI with a writer running; opsctl killed after a create, the identical command finishes; 0 acknowledged writes lost`, async () => {
    for (let i = 0; i < 20; i++) expect((await opsctl('kv', 'put', '--cluster', file, `dk/${i}`, `value ${i}`)).exitCode).toBe(0);
    const load = startLoad({ endpoints: c.endpoints });
    await until(() => load.acknowledgedIn('before') >= 20, 60_000, '20 acknowledged writes before the upgrade');
    const args = ['kv', 'upgrade', '--to', '3.7', '--yes', '--keep-backups', '--cluster', file];
    const t0 = Date.now();
    const k = await crashRun(args, { ...env, OPSCTL_CRASH_AT: '* after container-create * (changes)' });
    expect(k.signal, k.stderr).toBe('SIGKILL');
    expect((await c.names()).filter((n) => n.includes('.opsctl-kept-'))).toHaveLength(1);
    const r = await crashRun(args, env, 600_000);
    const ms = Date.now() - t0;
    expect(r.exitCode, r.stderr).toBe(0);
    load.phase('3.7');
    await until(() => load.acknowledgedIn('3.7') >= 10, 60_000, '10 acknowledged writes on 3.7');
    for (const v of await versions()) expect(v).toMatchObject({ server: PINNED_ETCD['3.7'], cluster: '3.7.0' });
    for (const m of c.members) {
      const now = await c.inspect(m.container);
      expect(now?.ImageName).toBe(images['3.7']);
      expect(now?.State.Running).toBe(true);
    }
    expect((await c.names()).filter((n) => n.includes('.opsctl-kept-'))).toHaveLength(3);
    const w = await load.stop();
    process.stderr.write(
      `[kv containers docker e2e] upgrade (2 runs, 1 killed) ${ms} ms; writes acknowledged ${w.acknowledged}, lost ${w.lost}, failed after the retry ${w.failedAfterRetry}\n`,
    );
    expect(w.lost, w.lostKeys.join(', ')).toBe(0);
    expect(w.badReads).toBe(0);
    // each member's volume copied after its stop (a volume of its own, made with `docker volume create`), measured
    type Row = { run: string; kind: string; member: string; bytes: number | null; path: string };
    const rows = (JSON.parse(String((await opsctl('kv', 'backups', 'list', '--json')).stdout)) as Row[]).filter((x) => x.kind === 'host-copy');
    expect(rows.map((x) => x.member).sort()).toEqual(['c1', 'c2', 'c3']);
    for (const x of rows) expect(x.bytes).toBeGreaterThan(0);
    expect((await c.volumes()).filter((v) => v.includes('.opsctl-backup-'))).toHaveLength(3);
    for (let i = 0; i < 20; i++) expect(String((await opsctl('kv', 'get', '--cluster', file, `dk/${i}`)).stdout).trim()).toBe(`value ${i}`);
    // without --cluster, nothing on the hosts can be reached (only the cluster file names the engine and the containers): said, and refused
    const dry = await opsctl('kv', 'backups', 'prune', '--keep', '0', '--dry-run');
    expect(dry.exitCode, String(dry.stderr)).toBe(0);
    expect(`${String(dry.stdout)}${String(dry.stderr)}`).toMatch(
      /a container driver, the containers the pruned runs kept too \(CONTAINER\.opsctl-kept-…\); without it, nothing on the hosts is removed/,
    );
    const refused = await opsctl('kv', 'backups', 'prune', '--keep', '0', '--yes');
    expect(refused.exitCode).toBe(2);
    expect(String(refused.stderr)).toContain('--cluster was not given');
    expect((await c.names()).filter((n) => n.includes('.opsctl-kept-'))).toHaveLength(3);
    expect((await c.volumes()).filter((v) => v.includes('.opsctl-backup-'))).toHaveLength(3);
  }, 900_000);

  it('kv downgrade --to 3.6 through the docker CLI brings back the kept 3.6 containers', async () => {
    const kept = new Map<string, string>();
    for (const n of (await c.names()).filter((x) => x.includes('.opsctl-kept-'))) kept.set(n.split('.opsctl-kept-')[0]!, (await c.inspect(n))!.Id);
    expect(kept.size).toBe(3);
    const down = await opsctl('kv', 'downgrade', '--to', '3.6', '--yes', '--no-backup', '--cluster', file, '--json');
    expect(down.exitCode, String(down.stderr)).toBe(0);
    expect(JSON.parse(String(down.stdout))).toMatchObject({ kind: 'downgrade', status: 'done', from: '3.7', to: '3.6' });
    for (const m of c.members) {
      const now = await c.inspect(m.container);
      expect(now?.Id).toBe(kept.get(m.container));
      expect(now?.State.Running).toBe(true);
    }
    for (const v of await versions()) expect(v).toMatchObject({ server: PINNED_ETCD['3.6'], cluster: '3.6.0' });
    for (let i = 0; i < 20; i++) expect(String((await opsctl('kv', 'get', '--cluster', file, `dk/${i}`)).stdout).trim()).toBe(`value ${i}`);
  }, 600_000);
});
