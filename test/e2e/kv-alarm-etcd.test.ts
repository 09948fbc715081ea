import { execa } from 'execa';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { startCluster, type RealTestCluster } from '../framework/index.js';
import { etcdLadderDirs, ladderVersions, minorAtLeast } from '../helpers/etcd-releases.js';
import { until } from '../helpers/kv.js';

/**
 * A real NOSPACE alarm on every version 3.2 … 3.6 (one member with a 2 MB backend quota, filled with
 * etcdctl until a put fails with "database space exceeded"), side by side with the same version's etcdctl:
 * `kv alarm list` prints etcdctl's lines; `kv endpoint health` reports the alarm on every version (as
 * etcdctl does from 3.5; 3.2 to 3.4's etcdctl still call the member healthy); the maintenance guide's way
 * out (del, compact, defrag, disarm) through opsctl leaves both tools with no alarm and writes working;
 * `kv alarm disarm` prints what etcdctl's does, and nothing when nothing is raised.
 */
const dirs = etcdLadderDirs();
// (3.2 … 3.6: opsctl's -w simple lines do not follow etcdctl 3.7's yet — measured on 3.7.3, `alarm list` ends
// without 3.6's trailing space and `endpoint status` has 3.6's columns; the ladder's 3.7 is tested in kv-hop37-etcd)
const VERSIONS = ladderVersions(dirs).filter(([minor]) => minor !== '3.7');
const after = minorAtLeast;
/** etcd refuses more than this many bytes of backend (2 MB): a few 700 KB values raise NOSPACE. */
const QUOTA = 2 * 1024 * 1024;

describe.runIf(Boolean(dirs))('a real NOSPACE alarm, side by side with etcdctl', () => {
  const cfg = tempConfigDir('opsctl-alarm-');
  const clusters: RealTestCluster[] = [];
  afterAll(async () => {
    for (const c of clusters) await c.destroy();
    cfg.cleanup();
  });

  for (const [minor, bin] of VERSIONS) {
    it(`etcd ${minor}: alarm list, endpoint health, the way out and disarm, as etcdctl ${minor} sees them`, async () => {
      const c = await startCluster({
        members: 'real',
        configDir: cfg.dir,
        size: 1,
        bins: { [minor]: bin },
        extraConfig: () => `quota-backend-bytes: ${QUOTA}`,
      });
      clusters.push(c);
      const m = c.members[0]!;
      c.real.start(m, minor);
      const ep = m.clientUrl.replace('http://', '');
      const ctl = (args: string[], inputFile?: string) =>
        execa(join(bin, 'etcdctl'), ['--endpoints', ep, '--dial-timeout', '10s', '--command-timeout', '30s', ...args], {
          reject: false,
          env: { ETCDCTL_API: '3' },
          timeout: 60_000,
          ...(inputFile ? { inputFile } : {}),
        });
      const ops = (args: string[]) =>
        execa(process.execPath, [BIN, 'kv', ...args, '--endpoints', m.clientUrl], {
          reject: false,
          env: { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1' },
          timeout: 60_000,
        });
      const says = (r: { exitCode?: number; stdout: string; stderr: string }) => `exit ${r.exitCode}\n${r.stdout}\n${r.stderr}`;
      await until(async () => (await ctl(['put', 'probe', 'x'])).exitCode === 0, 60_000, `etcd ${minor} taking writes`);

      /**
       * Puts ~700 KB random values (from stdin: an argv value over 128 KB fails) until etcd refuses one with
       * "database space exceeded"; how many keys etcd then holds under the prefix (its count, not the puts
       * that succeeded: a put that crosses the quota may be applied and still answered with the refusal).
       */
      const value = join(c.real.dir, 'value');
      writeFileSync(value, randomBytes(525_000).toString('base64'));
      const fill = async (prefix: string) => {
        for (let i = 0; i < 20; i++) {
          const put = await ctl(['put', `${prefix}${i}`], value);
          if (put.exitCode !== 0) {
            expect(put.stderr, says(put)).toContain('database space exceeded');
            expect(i, 'puts before the refusal').toBeGreaterThanOrEqual(2);
            // (--count-only came in 3.4: the keys, one a line)
            return (await ctl(['get', prefix, '--prefix', '--keys-only'])).stdout.split('\n').filter((l) => l.startsWith(prefix)).length;
          }
        }
        throw new Error(`etcd ${minor} took 20 values of 700 KB under a 2 MB quota: no NOSPACE`);
      };
      const raised = async () => {
        await until(async () => /alarm:NOSPACE/.test((await ctl(['alarm', 'list'])).stdout), 30_000, 'NOSPACE in etcdctl alarm list');
        return (await ctl(['alarm', 'list'])).stdout;
      };
      const revision = async () => /"revision":(\d+)/.exec((await ctl(['endpoint', 'status', '-w', 'json'])).stdout)![1]!;

      const stored = await fill('fill/');
      const theirList = await raised();

      // 1. alarm list: etcdctl's line exactly (memberID in decimal, a space at the end), exit 0
      expect(theirList).toMatch(/^memberID:\d+ alarm:NOSPACE $/);
      const list = await ops(['alarm', 'list', '-w', 'simple']);
      expect(list.exitCode, says(list)).toBe(0);
      expect(list.stdout).toBe(theirList);
      const decimal = /^memberID:(\d+)/.exec(theirList)![1]!;
      const listJson = await ops(['alarm', 'list', '--json']);
      expect(listJson.exitCode, says(listJson)).toBe(0);
      const status = JSON.parse((await ops(['endpoint', 'status', '--json'])).stdout) as Array<{ id: string; errors: string[] }>;
      expect(status[0]!.id).toBe(BigInt(decimal).toString(16));
      expect(JSON.parse(listJson.stdout)).toEqual([{ member_id: status[0]!.id, alarm: 'NOSPACE' }]);
      // 3.4+'s status carries the alarm among its errors, as etcdctl's does
      if (after(minor, '3.4')) {
        expect(status[0]!.errors).toEqual([theirList]);
        expect((await ctl(['endpoint', 'status', '-w', 'json'])).stdout).toContain(JSON.stringify([theirList]));
      }

      // 2. endpoint health: opsctl reports the alarm on every version, with etcdctl 3.5+'s line (exit 1)
      const unhealthy = `${ep} is unhealthy: failed to commit proposal: Active Alarm(s): NOSPACE `;
      const health = await ops(['endpoint', 'health', '-w', 'simple']);
      expect(health.exitCode, says(health)).toBe(1);
      expect(health.stdout).toBe(unhealthy);
      const healthJson = await ops(['endpoint', 'health', '--json']);
      expect(healthJson.exitCode).toBe(1);
      expect(JSON.parse(healthJson.stdout)).toMatchObject([{ endpoint: ep, healthy: false, error: 'Active Alarm(s): NOSPACE ' }]);
      const theirHealth = await ctl(['endpoint', 'health']);
      const theirLines = `${theirHealth.stdout}\n${theirHealth.stderr}`.split('\n').filter((l) => l.startsWith(ep));
      if (after(minor, '3.5')) {
        // 3.5 and 3.6's etcdctl check the alarms too: the same line, "Error: unhealthy cluster", exit 1
        expect(theirHealth.exitCode, says(theirHealth)).toBe(1);
        expect(theirLines).toEqual([unhealthy]);
        expect(theirHealth.stderr).toContain('Error: unhealthy cluster');
        const theirJson = JSON.parse((await ctl(['endpoint', 'health', '-w', 'json'])).stdout) as Array<{ health: boolean; error: string }>;
        expect(theirJson).toMatchObject([{ health: false, error: 'Active Alarm(s): NOSPACE ' }]);
      } else {
        // 3.2 to 3.4's etcdctl only read a key: healthy, exit 0, with the alarm raised
        expect(theirHealth.exitCode, says(theirHealth)).toBe(0);
        expect(theirLines).toHaveLength(1);
        expect(theirLines[0]).toMatch(new RegExp(`^${ep} is healthy: successfully committed proposal: took = `));
      }

      // 3. the way out (the maintenance guide's): del, compact at the current revision, defrag, disarm
      const del = await ops(['del', 'fill/', '--prefix', '-w', 'simple']);
      expect([del.exitCode, del.stdout]).toEqual([0, String(stored)]);
      const rev = await revision();
      // opsctl's endpoint status gives the same revision to compact at (nothing writes in between: NOSPACE is gone only after the disarm)
      const statusNow = await ops(['endpoint', 'status', '--json']);
      expect((JSON.parse(statusNow.stdout) as Array<{ revision: number }>).map((x) => String(x.revision))).toEqual([rev]);
      const compact = await ops(['compact', rev, '-w', 'simple']);
      expect([compact.exitCode, compact.stdout]).toEqual([0, `compacted revision ${rev}`]);
      const defrag = await ops(['defrag', '-w', 'simple']);
      expect(defrag.exitCode, says(defrag)).toBe(0);
      // 3.6's etcdctl adds how long it took
      expect(defrag.stdout).toMatch(new RegExp(`^Finished defragmenting etcd member\\[${ep}\\]${minor === '3.6' ? '\\. took [\\d.]+(ns|µs|ms|s)' : ''}$`));
      const disarm = await ops(['alarm', 'disarm', '-w', 'simple']);
      expect(disarm.exitCode, says(disarm)).toBe(0);
      expect(disarm.stdout).toBe(theirList);
      const listAfter = await ops(['alarm', 'list', '-w', 'simple']);
      expect([listAfter.exitCode, listAfter.stdout]).toEqual([0, '']);
      const theirListAfter = await ctl(['alarm', 'list']);
      expect([theirListAfter.exitCode, theirListAfter.stdout]).toEqual([0, '']);
      const putAgain = await ctl(['put', 'after', 'small']);
      expect([putAgain.exitCode, putAgain.stdout], says(putAgain)).toEqual([0, 'OK']);
      const healthAfter = await ops(['endpoint', 'health', '-w', 'simple']);
      expect(healthAfter.exitCode, says(healthAfter)).toBe(0);
      expect(healthAfter.stdout).toMatch(new RegExp(`^${ep} is healthy: successfully committed proposal: took = [\\d.]+(ns|µs|ms|s)$`));

      // etcdctl's own disarm of the same alarm, raised again and freed by hand: the line opsctl printed
      const storedAgain = await fill('again/');
      expect(await raised()).toBe(theirList);
      expect((await ctl(['del', 'again/', '--prefix'])).stdout).toBe(String(storedAgain));
      expect((await ctl(['compact', await revision()])).exitCode).toBe(0);
      expect((await ctl(['defrag'])).exitCode).toBe(0);
      const theirDisarm = await ctl(['alarm', 'disarm']);
      expect([theirDisarm.exitCode, theirDisarm.stdout], says(theirDisarm)).toEqual([0, disarm.stdout]);

      // 4. disarm with nothing raised: exit 0 and no line, for both
      const none = await ops(['alarm', 'disarm', '-w', 'simple']);
      expect([none.exitCode, none.stdout]).toEqual([0, '']);
      const theirNone = await ctl(['alarm', 'disarm']);
      expect([theirNone.exitCode, theirNone.stdout]).toEqual([0, '']);
      const noneJson = await ops(['alarm', 'disarm', '--json']);
      expect([noneJson.exitCode, JSON.parse(noneJson.stdout)]).toEqual([0, []]);
      expect((await ctl(['put', 'last', 'small'])).exitCode).toBe(0);
    }, 120_000);
  }
});
