import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { startCluster, type RealTestCluster } from '../framework/index.js';
import { etcdLadderDirs } from '../helpers/etcd-releases.js';
import { until } from '../helpers/kv.js';

/**
 * Each data-dir copy of a member gets its own {run}: the identical command after an `--on-failure
 * rollback` halt copies the member again, and a backup template shaped like the docs'
 * (`cp -a --sparse=always DIR DIR.bak-{run}`) must not land the second copy inside the first, nor the
 * put-back restore the first (stale) copy: etcd then panics ("tocommit(N) is out of range
 * [lastIndex(M)]") and the member stays down. Real etcd 3.5.35 → 3.6.16 through the command driver;
 * the 3.6 binary is a wrapper that fails a member's own start (its config file, not a trial's copy) as
 * many times as a file says.
 */
const dirs = etcdLadderDirs();

describe.runIf(Boolean(dirs))('a data-dir copy per attempt: the put-back restores the copy of its own attempt (real etcd, command driver)', () => {
  const cfg = tempConfigDir('opsctl-backup-attempts-');
  const env = { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1' };
  const opsctl = (...args: string[]) => runBin(args, { env, timeout: 300_000 });
  let c: RealTestCluster;
  let file: string;
  const failFile = join(cfg.dir, 'fail-left');
  const wrapper = join(cfg.dir, 'etcd-3.6-wrapper');
  const FAST = ['--poll-interval', '100ms', '--healthy-timeout', '60s', '--stop-timeout', '30s', '--settle', '0s'];

  beforeAll(async () => {
    mkdirSync(wrapper);
    // a start on the member's own config file fails while fail-left holds a number above 0 (the trials start
    // the binary on copies in a scratch dir: those pass); every other word goes to the real 3.6.16
    c = await startCluster({ members: 'real', size: 3, bins: { '3.5': dirs!.v35, '3.6': wrapper }, configDir: cfg.dir });
    writeFileSync(
      join(wrapper, 'etcd'),
      [
        '#!/bin/sh',
        `case "$*" in *'${c.real.dir}/'*/etcd.yaml*)`,
        `  n=$(cat '${failFile}' 2>/dev/null || echo 0)`,
        `  if [ "$n" -gt 0 ]; then echo $((n - 1)) >'${failFile}'; echo "the test makes this start fail" >&2; exit 1; fi ;;`,
        'esac',
        `exec '${dirs!.v36}/etcd' "$@"`,
        '',
      ].join('\n'),
      { mode: 0o755 },
    );
    for (const tool of ['etcdctl', 'etcdutl']) symlinkSync(join(dirs!.v36, tool), join(wrapper, tool));
    for (const m of c.members) c.real.start(m, '3.5');
    const d = (x: string) => `${c.real.dir}/{name}/${x}`;
    file = c.clusterFile({
      extra: [
        // the docs' shape: a copy beside the data dir named by {run}, put back by mv + cp
        `backup: cp -a --sparse=always ${d('data')} ${d('data.bak-{run}')}`,
        `restoreBackup: sh -c 'mv ${d('data')} ${d('data.failed-{run}')} && cp -a ${d('data.bak-{run}')} ${d('data')}'`,
        // the way onto each member's host, as over ssh: the put-back's WAL marks are read there (host-script.ts)
        'trial: sh -s',
      ],
    });
    await until(async () => (await opsctl('kv', 'health', '--cluster', file)).exitCode === 0, 60_000, 'three 3.5.35 members healthy');
    for (let i = 0; i < 20; i++) c.real.etcdctl(dirs!.v35, ['put', `before/${i}`, `v${i}`]);
  }, 180_000);

  afterAll(async () => {
    await c?.destroy();
    cfg.cleanup();
  });

  const upgrade = (...more: string[]) =>
    opsctl('kv', 'upgrade', '--to', '3.6', '--yes', '--cluster', file, '--target-bin', `3.6=${wrapper}`, '--on-failure', 'rollback', ...FAST, ...more);
  /** A member's status (its own endpoint), or undefined while it does not answer. */
  const status = (m: RealTestCluster['members'][number]) => {
    try {
      return JSON.parse(c.real.etcdctl(dirs!.v35, ['--endpoints', m.clientUrl, '--command-timeout', '3s', 'endpoint', 'status', '-w', 'json']))[0].Status as {
        version: string;
        header: { revision: number };
      };
    } catch {
      return undefined;
    }
  };
  const versions = () => c.members.map((m) => status(m)?.version);
  const revisions = () => c.members.map((m) => status(m)?.header.revision);

  it('two failed starts, each put back from its own copy (the member healthy with every write, no panic); the identical command then finishes and the run names all three copies', async () => {
    writeFileSync(failFile, '1\n');
    const first = await upgrade();
    const err1 = String(first.stderr);
    expect(first.exitCode, err1).toBe(3);
    const m = /--on-failure rollback: (etcd\d) is back on 3\.5/.exec(err1)?.[1];
    expect(m, err1).toBeDefined();
    const member = c.members.find((x) => x.name === m)!;
    expect(versions()).toEqual(['3.5.35', '3.5.35', '3.5.35']);

    // the cluster goes on: the member's log moves well past the first copy's
    for (let i = 0; i < 150; i++) c.real.etcdctl(dirs!.v35, ['put', `between/${i}`, `v${i}`]);
    await until(() => new Set(revisions()).size === 1 && revisions()[0] !== undefined, 30_000, 'every member at one revision');

    writeFileSync(failFile, '1\n');
    const second = await upgrade();
    const err2 = String(second.stderr);
    expect(second.exitCode, err2).toBe(3);
    expect(err2).toContain(`--on-failure rollback: ${m} is back on 3.5`);
    // its WAL marked on its host before the start and at the put-back: the same (the start failed before it joined)
    expect(err2).toMatch(/its copy put back: its WAL as before its start on 3\.6 \(\d+ WAL files, the newest \S+ with checksum \d+ \(on its host\)\)/);
    // put back from the second copy: it rejoins with every write (the first copy would panic it: tocommit out of range)
    const log = () => readFileSync(join(member.dir, 'etcd.log'), 'utf8');
    await until(
      () => (new Set(revisions()).size === 1 && revisions()[0] !== undefined) || !c.alive(member),
      30_000,
      'every member at one revision after the put-back',
    );
    expect(c.alive(member), `${/.*out of range.*/.exec(log())?.[0] ?? ''}\n${log().slice(-1500)}`).toBe(true);
    expect(c.real.etcdctl(dirs!.v35, ['--endpoints', member.clientUrl, 'get', 'between/149', '--print-value-only', '--consistency=s']).trim()).toBe('v149');
    expect(log()).not.toMatch(/panic|out of range/);

    // each copy and each failed dir in a place of its own, none inside another
    const runs = readdirSync(member.dir)
      .filter((f) => f.startsWith('data.bak-'))
      .map((f) => f.slice('data.bak-'.length))
      .sort();
    expect(runs).toHaveLength(2);
    expect(runs[1]).toBe(`${runs[0]}.2`);
    for (const kept of [...runs.map((r) => `data.bak-${r}`), ...runs.map((r) => `data.failed-${r}`)]) {
      expect(readdirSync(join(member.dir, kept)), kept).toEqual(['member']);
    }
    expect(readdirSync(join(member.dir, 'data'))).toEqual(['member']);

    // the identical command, nothing failing now: done, the member's data its own
    const third = await upgrade('--json');
    const err3 = String(third.stderr);
    expect(third.exitCode, err3).toBe(0);
    expect(versions()).toEqual(['3.6.16', '3.6.16', '3.6.16']);
    expect(c.real.etcdctl(dirs!.v35, ['get', 'between/149', '--print-value-only']).trim()).toBe('v149');
    const rep = JSON.parse(String(third.stdout)) as { status: string; backups: { remote?: string } };
    expect(rep.status).toBe('done');
    // the run's backups name every copy of the member, each by its own {run}
    const all = [...runs, `${runs[0]}.3`];
    expect(existsSync(join(member.dir, `data.bak-${all[2]}`))).toBe(true);
    for (const r of all) expect(rep.backups.remote, JSON.stringify(rep.backups)).toContain(`data.bak-${r}`);
    for (const other of c.members.filter((x) => x !== member)) expect(rep.backups.remote).toContain(`${other.name}/data.bak-${runs[0]}`);
  }, 900_000);
});
