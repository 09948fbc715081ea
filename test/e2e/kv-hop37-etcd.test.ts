import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type RealTestCluster } from '../framework/index.js';
import { etcdLadderDirs, PINNED_ETCD } from '../helpers/etcd-releases.js';
import { until } from '../helpers/kv.js';
import { startLoad } from '../helpers/kv-load.js';

/** kubeadm's two experimental flags, in every etcd static pod it wrote for years (and the units that copied them). */
const KUBEADM = ['--experimental-initial-corrupt-check=true', '--experimental-watch-progress-notify-interval=5s'];
/** Their replacements, which 3.6 takes already (3.7 only these). */
const REPLACED = ['--feature-gates=InitialCorruptCheck=true', '--watch-progress-notify-interval=5s'];

const dirs = etcdLadderDirs();

/**
 * The hop 3.6 → 3.7 on real binaries (3.6.16 and 3.7.3 built by scripts/etcd-build.sh): three members
 * started from flags, as kubeadm's static pods and the units that copied them are, run by a control
 * script through the command driver; the trial reads each one's command line from /proc and starts
 * the 3.7 binary with it (`trial: sh -s`, as `ssh {host} sudo sh -s` on a real host).
 */
describe.runIf(Boolean(dirs))(
  `the 3.6 → 3.7 hop on real etcd (${PINNED_ETCD['3.6']} → ${PINNED_ETCD['3.7']}): kubeadm's flags, a writer, the downgrade back`,
  () => {
    let c: RealTestCluster;
    let file: string;
    const opsctl = (...args: string[]) => c.opsctl(...args);
    const pids = () => c.members.map((m) => c.pid(m));
    const healthy = async () => (await opsctl('kv', 'health', '--cluster', file)).exitCode === 0;

    beforeAll(async () => {
      c = await startCluster({
        members: 'real',
        size: 3,
        version: '3.6',
        bins: { '3.6': dirs!.v36, '3.7': dirs!.v37 },
        flags: () => ({ args: KUBEADM }),
        file: { extra: ['trial: sh -s'] },
        timeout: 600_000,
      });
      file = c.file;
    }, 120_000);

    afterAll(() => c?.destroy());

    it('members with both flags: refused before any stop, in one run, naming both flags and both replacements for every member', async () => {
      const before = pids();
      const r = await opsctl('kv', 'upgrade', '--to', '3.7', '--yes', '--no-backup', '--cluster', file, '--target-bin', `3.7=${dirs!.v37}`);
      const err = String(r.stderr);
      expect(r.exitCode, err).toBe(1);
      for (const m of c.members) {
        const line = err.split('\n').find((l) => l.includes(`[experimental-removed] member ${m.name}:`));
        expect(line, err).toBeDefined();
        expect(line).toContain('2 removed in 3.7');
        expect(line).toContain('--experimental-initial-corrupt-check=true (flag --experimental-initial-corrupt-check in the command line of pid');
        expect(line).toContain(
          '--experimental-watch-progress-notify-interval=5s (flag --experimental-watch-progress-notify-interval in the command line of pid',
        );
        expect(line).toContain(`fix: replace the flags ${KUBEADM.join(', ')} with ${REPLACED.join(' ')}`);
        // the binary's own verdict beside it: real 3.7.3 exits at the first one only
        expect(err).toMatch(new RegExp(`\\[trial-start\\] member ${m.name}: [^\\n]*flag provided but not defined: -experimental-initial-corrupt-check`));
      }
      expect(err).toContain('nothing was stopped or changed');
      expect(pids()).toEqual(before);
      for (const m of c.members) expect(c.alive(m)).toBe(true);
      expect(existsSync(join(c.configDir, 'data', 'kv', 'journals'))).toBe(false);
    }, 300_000);

    it(`replaced on 3.6 member by member, the cluster goes to ${PINNED_ETCD['3.7']} with a writer running (0 acknowledged writes lost), then kv downgrade --to 3.6 with the keys`, async () => {
      // the operator's fix, as the refusal gives it: each member restarted on 3.6 with the new names, one at a time
      for (const m of c.members) {
        const args = join(m.dir, 'etcd.args');
        writeFileSync(args, readFileSync(args, 'utf8').replace(KUBEADM[0]!, REPLACED[0]!).replace(KUBEADM[1]!, REPLACED[1]!));
        c.real.stop(m);
        await until(() => !c.alive(m), 30_000, `${m.name} stopped`);
        c.real.start(m, '3.6');
        await until(healthy, 60_000, `${m.name} back on 3.6 with the replacements`);
      }
      for (let i = 0; i < 20; i++) expect((await opsctl('kv', 'put', '--cluster', file, `hop37/${i}`, `value ${i}`)).exitCode).toBe(0);
      // (a writer beside the hop, paced: the load client back to back, as much as a cluster takes, is kv-load-ladder's)
      const load = startLoad({ endpoints: c.endpoints, pauseMs: 100 });
      await until(() => load.acknowledgedIn('before') >= 20, 60_000, '20 acknowledged writes before the upgrade');
      const t0 = Date.now();
      const up = await opsctl('kv', 'upgrade', '--to', '3.7', '--yes', '--no-backup', '--cluster', file, '--target-bin', `3.7=${dirs!.v37}`, '--json');
      const upMs = Date.now() - t0;
      load.phase('3.7');
      await until(() => load.acknowledgedIn('3.7') >= 10, 60_000, '10 acknowledged writes on 3.7');
      expect(up.exitCode, String(up.stderr)).toBe(0);
      const rep = JSON.parse(String(up.stdout));
      expect(rep).toMatchObject({ status: 'done' });
      let v = JSON.parse(String((await opsctl('kv', 'version', '--cluster', file, '--json')).stdout));
      for (const m of v) expect(m).toMatchObject({ server: PINNED_ETCD['3.7'], cluster: '3.7.0' });

      load.phase('downgrade');
      const t1 = Date.now();
      const down = await opsctl('kv', 'downgrade', '--to', '3.6', '--yes', '--no-backup', '--cluster', file, '--target-bin', `3.6=${dirs!.v36}`, '--json');
      const downMs = Date.now() - t1;
      expect(down.exitCode, String(down.stderr)).toBe(0);
      expect(JSON.parse(String(down.stdout))).toMatchObject({ kind: 'downgrade', status: 'done', from: '3.7', to: '3.6' });
      load.phase('after');
      await until(() => load.acknowledgedIn('after') >= 10, 60_000, '10 acknowledged writes after the downgrade');
      const r = await load.stop();
      process.stderr.write(
        `[kv hop 3.7 e2e] upgrade ${upMs} ms, downgrade ${downMs} ms; writes acknowledged ${r.acknowledged}, lost ${r.lost}, failed after the retry ${r.failedAfterRetry}\n`,
      );
      expect(r.lost, r.lostKeys.join(', ')).toBe(0);
      expect(r.badReads).toBe(0);
      v = JSON.parse(String((await opsctl('kv', 'version', '--cluster', file, '--json')).stdout));
      for (const m of v) expect(m).toMatchObject({ server: PINNED_ETCD['3.6'], cluster: '3.6.0' });
      for (let i = 0; i < 20; i++) expect(String((await opsctl('kv', 'get', '--cluster', file, `hop37/${i}`)).stdout).trim()).toBe(`value ${i}`);
    }, 600_000);
  },
);
