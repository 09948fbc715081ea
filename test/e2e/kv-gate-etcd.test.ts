import { execa } from 'execa';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { startCluster, type RealTestCluster, type RealMember, watchDown } from '../framework/index.js';
import { etcdReleaseDirs } from '../helpers/etcd-releases.js';
import { readJournal, until } from '../helpers/kv.js';

const releases = etcdReleaseDirs();

/**
 * Issue 27, item 1, on real etcd 3.2.32 → 3.3.27 (3 members, the command driver): the whole-cluster
 * look is taken right before the stop command (after the snapshot), and again before the backup copy
 * while a member is down. The faults are placed, not timed: a stand-in etcdctl holds `snapshot save`
 * until the test has killed another member, and a stop template holds until the test has killed
 * another member while the stopped one is down.
 */
describe.runIf(releases)('kv upgrade on real etcd: the gate is fresh at the stop (issue 27)', () => {
  const cfg = tempConfigDir('opsctl-kv-gate-');
  let c: RealTestCluster;
  let marks: string;
  const env = () => ({ OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1' });
  const opsctl = (...args: string[]) => execa(process.execPath, [BIN, ...args], { reject: false, env: env(), extendEnv: true, timeout: 240_000 });
  const journal = () => readJournal(cfg.dir);
  const mark = (name: string) => join(marks, name);
  const healthy = async () =>
    (
      await Promise.all(
        c.endpoints.map((e) =>
          fetch(`${e}/health`, { signal: AbortSignal.timeout(3000) })
            .then((r) => r.json() as Promise<{ health: string | boolean }>)
            .then(
              (h) => String(h.health) === 'true',
              () => false,
            ),
        ),
      )
    ).every(Boolean);
  const versions = async () =>
    Promise.all(
      c.endpoints.map((e) =>
        fetch(`${e}/version`)
          .then((r) => r.json() as Promise<{ etcdserver: string }>)
          .then(
            (v) => v.etcdserver,
            () => undefined,
          ),
      ),
    );
  const kill = async (m: RealMember) => {
    process.kill(c.pid(m)!, 'SIGKILL');
    await until(() => !c.alive(m), 30_000, `${m.name} gone after SIGKILL`);
  };
  const restart = async (m: RealMember) => {
    if (!c.alive(m)) c.real.start(m, '3.2');
    await until(healthy, 90_000, 'every member healthy again');
  };

  beforeAll(async () => {
    c = await startCluster({ members: 'real', configDir: cfg.dir, size: 3, bins: { '3.2': releases!.v32, '3.3': releases!.v33 } });
    for (const m of c.members) c.real.start(m, '3.2');
    await until(healthy, 90_000, 'the 3.2.32 cluster');
    for (let i = 0; i < 20; i++) c.real.etcdctl(releases!.v33, ['put', `before/${i}`, `v${i}`]);
    marks = join(c.real.dir, 'marks');
    mkdirSync(marks, { recursive: true });
    // The stand-in etcdctl: the real one, but `snapshot save` waits for the test's go-ahead.
    writeFileSync(
      join(c.real.dir, 'etcdctl-stall.sh'),
      `#!/bin/sh\ncase " $* " in *" snapshot save "*) echo "$*" >${mark('saving.tmp')}; mv ${mark('saving.tmp')} ${mark('saving')}; while [ ! -e ${mark('go-snapshot')} ]; do sleep 0.05; done ;; esac\nexec ${releases!.v33}/etcdctl "$@"\n`,
      { mode: 0o755 },
    );
    // The stop template: the member's real stop, then wait for the test's go-ahead (the member is down meanwhile).
    writeFileSync(
      join(c.real.dir, 'stop-stall.sh'),
      `#!/bin/sh\n${c.real.ctl} stop "$1"\ntouch ${mark('stopped-')}"$1"\nwhile [ ! -e ${mark('go-stop')} ]; do sleep 0.05; done\n`,
      { mode: 0o755 },
    );
  }, 300_000);

  afterAll(async () => {
    await c?.destroy();
    cfg.cleanup();
  });

  const backup = () => `backup: cp -a ${c.real.dir}/{name}/data ${c.real.dir}/{name}/data.bak-{run}`;

  it('a member killed while the next one is snapshotted: no stop at all (halt, exit 3, naming it), never two members down', async () => {
    const file = c.clusterFile({ name: 'cluster.yaml', extra: [backup()] });
    const pids = c.members.map((m) => c.pid(m));
    const up = opsctl(
      'kv',
      'upgrade',
      '--to',
      '3.3',
      '--yes',
      '--cluster',
      file,
      '--settle',
      '0s',
      '--poll-interval',
      '100ms',
      '--snapshot-via',
      'etcdctl',
      '--etcdctl',
      join(c.real.dir, 'etcdctl-stall.sh'),
    );
    let victim: RealMember | undefined;
    let snapped: string | undefined;
    const seen = await watchDown(c, async () => {
      await until(() => existsSync(mark('saving')), 120_000, 'the snapshot save held by the stand-in etcdctl');
      // The snapshot before a member's stop is named for that member (…-NAME.db) and taken from the
      // leader (the --endpoints URL etcdctl was pointed at), as the guides take it.
      const args = readFileSync(mark('saving'), 'utf8');
      snapped = c.members.find((m) => new RegExp(`-${m.name}\\.db`).test(args))?.name;
      const source = c.members.find((m) => args.includes(`--endpoints ${m.clientUrl} `))?.name;
      expect(snapped).toBeDefined();
      expect(source).toBeDefined();
      expect(source).not.toBe(snapped);
      // the third member: neither the one about to stop nor the leader serving its snapshot
      victim = c.members.find((m) => m.name !== snapped && m.name !== source)!;
      await kill(victim);
      writeFileSync(mark('go-snapshot'), '');
      return up;
    });
    const r = seen.result;
    expect(r.exitCode, r.stderr).toBe(3);
    expect(r.stderr).toMatch(new RegExp(`not stopping ${snapped}: ${victim!.name} is not healthy`));
    expect(r.stderr).toMatch(/was not touched/);
    expect(r.stderr).toMatch(/Roll back with: {2}opsctl kv rollback/);
    // No member stopped by opsctl: the other two run the same processes as before.
    for (const [i, m] of c.members.entries()) if (m !== victim) expect([m.name, c.pid(m), c.alive(m)]).toEqual([m.name, pids[i], true]);
    expect(seen.maxDown).toBe(1);
    const j = journal();
    expect(j.status).toBe('halted');
    expect(j.steps.find((s: any) => s.member === snapped && s.kind === 'snapshot').status).toBe('done');
    expect(j.steps.find((s: any) => s.member === snapped && s.kind === 'stop').status).toBe('pending');
    expect(j.steps.filter((s: any) => s.kind === 'stop' && s.status !== 'pending')).toEqual([]);
    await restart(victim!);
  }, 300_000);

  it('a member killed while another is down for its backup: the down one is started again on 3.2.32 first, halt exit 3 naming both; then the resume finishes', async () => {
    const file = c.clusterFile({ name: 'cluster-stall.yaml', extra: [backup()] });
    // The stop template held until the test's kill (the cluster file's own stop line replaced).
    writeFileSync(file, readFileSync(file, 'utf8').replace(/ {2}stop: .*\n/, `  stop: ${join(c.real.dir, 'stop-stall.sh')} {name}\n`));
    const up = opsctl('kv', 'upgrade', '--to', '3.3', '--yes', '--cluster', file, '--settle', '0s', '--poll-interval', '100ms');
    await until(() => readdirSync(marks).some((f) => f.startsWith('stopped-')), 120_000, 'a member stopped by opsctl');
    const down = c.members.find((m) => existsSync(mark(`stopped-${m.name}`)))!;
    await until(() => !c.alive(down), 60_000, `${down.name} down`);
    const victim = c.members.find((m) => m !== down)!;
    await kill(victim);
    writeFileSync(mark('go-stop'), '');
    const r = await up;
    expect(r.exitCode, r.stderr).toBe(3);
    expect(r.stderr).toContain(`${victim.name} lost while ${down.name} was down for its upgrade`);
    expect(r.stderr).toMatch(new RegExp(`${down.name} was started again on (.*bin-3\\.2/etcd|3\\.2) and is healthy`));
    // Never a copy while the cluster had lost a second member: no backup of the down member.
    expect(existsSync(join(c.real.dir, down.name, `data.bak-${journal().id}`))).toBe(false);
    expect(c.alive(down)).toBe(true);
    const i = c.members.indexOf(down);
    expect((await versions())[i]).toBe('3.2.32');
    const j = journal();
    expect(j.status).toBe('halted');
    for (const k of ['stop', 'wait-stopped', 'backup-data']) expect(j.steps.find((s: any) => s.member === down.name && s.kind === k).status).toBe('pending');

    // Fixed: the same command resumes, one member down at a time, to the end.
    await restart(victim);
    const plain = c.clusterFile({ name: 'cluster.yaml', extra: [backup()] });
    const again = await watchDown(c, () => opsctl('kv', 'upgrade', '--to', '3.3', '--yes', '--cluster', plain, '--settle', '0s', '--poll-interval', '100ms'));
    expect(again.result.exitCode, again.result.stderr).toBe(0);
    expect(again.maxDown).toBeLessThanOrEqual(1);
    expect(await versions()).toEqual(['3.3.27', '3.3.27', '3.3.27']);
    expect(c.real.etcdctl(releases!.v33, ['get', 'before/', '--prefix', '--keys-only']).split('\n').filter(Boolean)).toHaveLength(20);
  }, 300_000);
});
