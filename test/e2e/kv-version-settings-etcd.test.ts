import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type RealTestCluster } from '../framework/index.js';
import { etcdLadderDirs, PINNED_ETCD } from '../helpers/etcd-releases.js';
import { until } from '../helpers/kv.js';

const dirs = etcdLadderDirs();

/**
 * Members whose start picks its settings by version (a per-version flags file, as per-version systemd units and
 * kubeadm manifests do): the 3.6 file keeps --enable-v2, which 3.6 refuses ("flag provided but not defined").
 * The process that runs now (3.5, its own file) proves nothing about that start; the command driver's `settings`
 * template prints what the start on {version} runs with, and the checks read that: refused before any stop,
 * naming the flag and where it was read.
 */
describe.runIf(Boolean(dirs))(`per-version settings on a command-driver cluster (real ${PINNED_ETCD['3.5']} → ${PINNED_ETCD['3.6']})`, () => {
  let c: RealTestCluster;
  const opsctl = (...args: string[]) => c.opsctl(...args);

  beforeAll(async () => {
    c = await startCluster({ members: 'real', size: 3, bins: { '3.5': dirs!.v35, '3.6': dirs!.v36 }, flags: () => ({ args: [] }) });
    for (const m of c.members) {
      // the 3.6 start's own flags file: the member's flags and --enable-v2 (as a 3.5 unit copied for 3.6 keeps it)
      writeFileSync(join(m.dir, 'etcd-3.6.args'), `${readFileSync(join(m.dir, 'etcd.args'), 'utf8').trimEnd()}\n--enable-v2=true\n`);
      c.real.start(m, '3.5');
    }
    await until(() => c.members.every((m) => c.alive(m)), 30_000, `three ${PINNED_ETCD['3.5']} members`);
    const file = c.clusterFile({ name: 'plain.yaml', extra: ['trial: sh -s'] });
    await until(async () => (await opsctl('kv', 'health', '--cluster', file)).exitCode === 0, 60_000, 'the cluster healthy');
  }, 120_000);

  afterAll(() => c?.destroy());

  it('with a settings template: refused before any stop, naming --enable-v2 and the template it was read from', async () => {
    const pids = c.members.map((m) => c.pid(m));
    const withSettings = c.clusterFile({
      name: 'settings.yaml',
      extra: ['trial: sh -s', `settings: cat ${c.real.dir}/{name}/etcd-{version}.args`],
    });
    const up = await opsctl('kv', 'upgrade', '--to', '3.6', '--yes', '--no-backup', '--cluster', withSettings);
    expect(up.exitCode, `${String(up.stdout)}\n${String(up.stderr)}`).toBe(1);
    const err = String(up.stderr).replace(/\s+/g, ' ');
    expect(err).toMatch(/refused before any change/);
    for (const m of c.members)
      expect(err).toMatch(
        new RegExp(`\\[enable-v2-gone\\] member ${m.name}: .*the settings template for 3\\.6 \\(\`cat \\S+/${m.name}/etcd-3\\.6\\.args\`\\)`),
      );
    expect(err).toMatch(/flag provided but not defined/);
    expect(c.members.map((m) => c.pid(m))).toEqual(pids);
    expect(c.members.every((m) => c.alive(m))).toBe(true);
  }, 300_000);

  it("with each version's systemd unit as its settings (systemctl cat's shape): its EnvironmentFile read on the host, refused before any stop naming the flag", async () => {
    const pids = c.members.map((m) => c.pid(m));
    for (const m of c.members) {
      // the 3.6 unit: its flags as ExecStart= continuations, and $EXTRA from an environment file that keeps --enable-v2
      const flags = readFileSync(join(m.dir, 'etcd.args'), 'utf8').trimEnd().split('\n');
      writeFileSync(
        join(m.dir, 'etcd-3.6.service'),
        [
          `# /etc/systemd/system/etcd-3.6.service`,
          '[Unit]',
          'Description=etcd 3.6',
          '[Service]',
          'Type=notify',
          `EnvironmentFile=-${m.dir}/no-such.env`,
          `EnvironmentFile=${m.dir}/etcd-3.6.env`,
          `ExecStart=${dirs!.v36}/etcd \\`,
          ...flags.map((f) => `  ${f} \\`),
          '  $EXTRA',
          '',
        ].join('\n'),
      );
      writeFileSync(join(m.dir, 'etcd-3.6.env'), 'EXTRA="--enable-v2=true"\n');
    }
    const withUnits = c.clusterFile({
      name: 'units.yaml',
      extra: ['trial: sh -s', `settings: cat ${c.real.dir}/{name}/etcd-{version}.service`],
    });
    const up = await opsctl('kv', 'upgrade', '--to', '3.6', '--yes', '--no-backup', '--cluster', withUnits);
    expect(up.exitCode, `${String(up.stdout)}\n${String(up.stderr)}`).toBe(1);
    const err = String(up.stderr).replace(/\s+/g, ' ');
    expect(err).toMatch(/refused before any change/);
    for (const m of c.members)
      expect(err).toMatch(
        new RegExp(`\\[enable-v2-gone\\] member ${m.name}: .*the settings template for 3\\.6 \\(\`cat \\S+/${m.name}/etcd-3\\.6\\.service\`\\): ExecStart=`),
      );
    expect(err).toMatch(/flag provided but not defined/);
    expect(c.members.map((m) => c.pid(m))).toEqual(pids);
    expect(c.members.every((m) => c.alive(m))).toBe(true);
  }, 300_000);
});
