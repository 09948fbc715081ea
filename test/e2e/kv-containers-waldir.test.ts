import { execa } from 'execa';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { etcdImages, podmanProblem, PODMAN, type ContainerCluster, startCluster, type ContainerTestCluster } from '../framework/index.js';
import { etcdLadderDirs, PINNED_ETCD } from '../helpers/etcd-releases.js';
import { until } from '../helpers/kv.js';
import type { MemberSpec } from '../../src/kv/cluster/cluster-file.js';
import { ContainerDriver } from '../../src/kv/containers/driver.js';
import { walV2Replay } from '../../src/kv/wal/v2-data.js';

const dirs = etcdLadderDirs();
const problem = dirs ? await podmanProblem() : undefined;
if (problem) {
  if (process.env.OPSCTL_REQUIRE_E2E === '1') throw new Error(`podman is required (OPSCTL_REQUIRE_E2E=1): ${problem}`);
  process.stderr.write(`\n*** SKIPPING the container driver's WAL-dir e2e: ${problem} ***\n\n`);
}

/**
 * A WAL dir of its own for container members, on real podman: a 3-member 3.6 cluster whose members keep their WAL
 * on a volume of their own (at /var/lib/etcd-wal, --wal-dir=/var/lib/etcd-wal/wal). The driver reads both dirs as paths on this machine
 * (dataDirs: the volumes' Mountpoints; the WAL reader reads it there), copies both after a stop (the WAL as the
 * copy's member/wal) and puts both back (the WAL the member ran on kept as the failed data's member/wal), and the
 * member starts on what was put back; then `kv upgrade --to 3.7` (the proof on copies of both dirs, each member's
 * volumes copied after its stop) with every key there.
 */
describe.runIf(Boolean(dirs) && !problem)(
  `container members with a WAL volume of their own on real podman (${PINNED_ETCD['3.6']} → ${PINNED_ETCD['3.7']})`,
  () => {
    const cfg = tempConfigDir('opsctl-containers-waldir-e2e-');
    let cluster: ContainerTestCluster | undefined;
    let c: ContainerCluster;
    let file: string;
    let images: Record<'3.5' | '3.6' | '3.7', string>;
    const env = { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1' };
    const opsctl = (...a: string[]) => execa(process.execPath, [BIN, ...a], { reject: false, env, extendEnv: true, timeout: 600_000 });
    const healthy = async () => (await opsctl('kv', 'health', '--cluster', file)).exitCode === 0;
    const versions = async () =>
      JSON.parse(String((await opsctl('kv', 'version', '--cluster', file, '--json')).stdout) || '[]') as Array<{ server?: string; cluster?: string }>;
    const mountpoint = async (volume: string) => String((await execa(PODMAN, ['volume', 'inspect', '--format', '{{.Mountpoint}}', volume])).stdout).trim();
    const putKeys = async (prefix: string) => {
      for (let i = 0; i < 10; i++) expect((await opsctl('kv', 'put', '--cluster', file, `${prefix}/${i}`, `value ${i}`)).exitCode).toBe(0);
    };
    const keysIntact = async (prefix: string) => {
      for (let i = 0; i < 10; i++) expect(String((await opsctl('kv', 'get', '--cluster', file, `${prefix}/${i}`)).stdout).trim()).toBe(`value ${i}`);
    };

    beforeAll(async () => {
      images = await etcdImages(dirs!);
      cluster = await startCluster({
        members: 'container',
        size: 3,
        image: images['3.6'],
        wal: true,
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

    it('dataDirs, the copy and the put-back of a stopped member: both dirs, the member started again on what was put back', async () => {
      await putKeys('before');
      const cm = c.members[0]!;
      const m: MemberSpec = { name: cm.name, endpoint: cm.clientUrl, container: cm.container };
      const d = new ContainerDriver({ type: 'container', engine: PODMAN, images: { '3.6': images['3.6'], '3.7': images['3.7'] } }, execa, process.env);
      const [data, wal] = [await mountpoint(cm.volume), `${await mountpoint(cm.walVolume!)}/wal`];
      expect(await d.dataDirs(m)).toEqual({ dataDir: data, walDir: wal });
      // the WAL reader (the just-in-time check's) reads the member's WAL there: no v2 request in it
      const read = walV2Replay((await d.dataDirs(m))!);
      expect(read).toMatchObject({ count: 0 });

      await d.stop(m);
      await until(async () => !(await d.isRunning(m)), 120_000, `${cm.container} stopped`);
      const run = '20261127T230000-e2e001';
      const detail = await d.backupDataDir(m, '', run);
      expect(detail).toContain('as member/wal');
      const copy = await mountpoint(`${cm.container}.opsctl-backup-${run}`);
      expect(existsSync(join(copy, 'member', 'snap', 'db'))).toBe(true);
      const walFiles = readdirSync(wal).filter((f) => f.endsWith('.wal'));
      expect(walFiles.length).toBeGreaterThan(0);
      expect(readdirSync(join(copy, 'member', 'wal')).filter((f) => f.endsWith('.wal'))).toEqual(walFiles);

      // what the member ran on since (a file of the test's own in its WAL dir): kept aside by the put-back, not put back
      writeFileSync(join(wal, 'ran-on-since'), 'x');
      const back = await d.restoreBackup(m, '', run);
      expect(back).toContain(`WAL dir ${wal} (its member/wal) restored`);
      const failed = await mountpoint(`${cm.container}.opsctl-failed-${run}`);
      expect(readdirSync(join(failed, 'member', 'wal'))).toContain('ran-on-since');
      expect(readdirSync(wal)).not.toContain('ran-on-since');
      expect(readdirSync(wal).filter((f) => f.endsWith('.wal'))).toEqual(walFiles);
      expect(existsSync(join(data, 'member', 'wal'))).toBe(false);
      expect(existsSync(join(data, 'member', 'snap', 'db'))).toBe(true);

      await d.start(m, { version: '3.6' });
      await until(healthy, 120_000, 'the cluster healthy with the member put back');
      await keysIntact('before');
      expect(await d.dropBackup(m, '', run)).toContain('removed');
      await execa(PODMAN, ['volume', 'rm', `${cm.container}.opsctl-failed-${run}`]);
    }, 600_000);

    it('kv upgrade --to 3.7: proven on copies of both dirs, each member copied after its stop with its WAL; every key there', async () => {
      await putKeys('upgrade');
      const t0 = Date.now();
      const r = await opsctl('kv', 'upgrade', '--to', '3.7', '--yes', '--keep-backups', '--cluster', file, '--debug');
      const ms = Date.now() - t0;
      expect(r.exitCode, String(r.stderr)).toBe(0);
      expect(String(r.stderr)).not.toContain('its data dirs are not read on this machine');
      for (const v of await versions()) expect(v).toMatchObject({ server: PINNED_ETCD['3.7'], cluster: '3.7.0' });
      await keysIntact('before');
      await keysIntact('upgrade');
      for (const cm of c.members) {
        const copies = (await c.volumes()).filter((v) => v.startsWith(`${cm.container}.opsctl-backup-`));
        expect(copies).toHaveLength(1);
        const copy = await mountpoint(copies[0]!);
        expect(readdirSync(join(copy, 'member', 'wal')).some((f) => f.endsWith('.wal'))).toBe(true);
      }
      process.stderr.write(`[kv containers WAL-dir e2e] kv upgrade 3.6 → 3.7 of 3 members with WAL volumes of their own: ${ms} ms\n`);
    }, 900_000);
  },
);
