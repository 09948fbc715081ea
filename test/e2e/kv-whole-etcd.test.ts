import { execFileSync } from 'node:child_process';
import { readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/kv/sandbox/sandbox.js';
import { runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { requireProgram } from '../helpers/e2e.js';
import { readJournal, until } from '../helpers/kv.js';
import { startCluster, type SimulatedTestCluster } from '../framework/index.js';

/**
 * The whole cluster on real etcd (Debian's 3.4, a 3-member sandbox, the built binary): a member added
 * with `etcdctl member add` and never started counts toward the quorum (4 members, quorum 3), so
 * kv upgrade must see it in the member list, before it starts (refused, exit 1) and between two
 * members (halted before the next stop, exit 3). The rolling restart is --allow-same-version to 3.4.
 */
const hasEtcd = requireProgram('etcd', '/usr/bin/etcd') && requireProgram('etcdctl', '/usr/bin/etcdctl');

describe.runIf(hasEtcd)('kv upgrade counts the members the cluster lists (real etcd 3.4)', () => {
  const { dir, cleanup } = tempConfigDir('opsctl-kv-whole-');
  const env = { OPSCTL_CONFIG_DIR: dir };
  const opsctl = (...args: string[]) => runBin(args, { env, timeout: 120_000 });
  const UPGRADE = ['kv', 'upgrade', '--to', '3.4', '--allow-same-version', '--target-bin', '/usr/bin', '--poll-interval', '100ms'];
  let members: Array<{ name: string; endpoint: string; dataDir: string; pidFile: string }> = [];
  const etcdctl = (...args: string[]) =>
    execFileSync('/usr/bin/etcdctl', ['--endpoints', members.map((m) => m.endpoint).join(','), '--dial-timeout', '5s', '--command-timeout', '15s', ...args], {
      env: { PATH: '/usr/bin:/bin', ETCDCTL_API: '3' },
      stdio: 'pipe',
    }).toString();
  const pids = () => members.map((m) => Number(readFileSync(m.pidFile, 'utf8')));
  /** Adds a member that never starts; returns its hex id and peer URL. */
  const addGhost = async () => {
    const peer = `http://127.0.0.1:${await freePort()}`;
    const out = etcdctl('member', 'add', 'ghost', `--peer-urls=${peer}`);
    const id = /Member\s+([0-9a-f]+)\s+added/.exec(out)?.[1];
    expect(id, out).toBeDefined();
    return { id: id!, peer };
  };

  let c: SimulatedTestCluster | undefined;

  beforeAll(async () => {
    // Without the strict reconfig check etcd adds a member as soon as asked (with it, only once every
    // member has been connected for 5 s: a wait on the clock this test need not make).
    c = await startCluster({ members: 'simulated', size: 3, etcdBin: '/usr/bin', configDir: dir, extra: ['--config', 'strict-reconfig-check=false'] });
    members = JSON.parse(readFileSync(join(dir, 'data', 'kv', 'sandbox', 'sandbox.json'), 'utf8')).members;
  }, 300_000);

  afterAll(async () => {
    await c?.destroy();
    cleanup();
  }, 300_000);

  it('an added, never started member refuses the upgrade before any change (exit 1), named by id and peer URL', async () => {
    const ghost = await addGhost();
    try {
      const before = pids();
      const r = await opsctl(...UPGRADE, '--yes');
      expect(r.exitCode, String(r.stderr)).toBe(1);
      const dec = BigInt(`0x${ghost.id}`).toString();
      expect(r.stderr).toContain(
        `member (not started yet) (id ${dec}, peer ${ghost.peer}) is in the cluster's member list (4 members, quorum 3) but was not given, and has never started`,
      );
      expect(r.stderr).toContain(`etcdctl member remove ${ghost.id}`);
      expect(pids()).toEqual(before);
      expect(readJournal(dir)).toBeUndefined();
    } finally {
      etcdctl('member', 'remove', ghost.id);
    }
    const ok = await opsctl(...UPGRADE, '--dry-run');
    expect(ok.exitCode, String(ok.stderr)).toBe(0);
    expect(ok.stdout).toMatch(/Plan: rolling restart on 3\.4/);
  });

  it('a v3 database gone from a data dir (v2 data only) is refused naming the directory, nothing stopped', async () => {
    const m = members[2]!;
    const db = join(m.dataDir, 'member', 'snap', 'db');
    const before = pids();
    renameSync(db, `${db}.aside`); // the running member keeps its open file
    try {
      const r = await opsctl(...UPGRADE, '--yes');
      expect(r.exitCode, String(r.stderr)).toBe(1);
      expect(r.stderr).toContain(`member ${m.name}: ${m.dataDir} holds v2 data (member/wal) but no v3 database (member/snap/db is missing)`);
      expect(pids()).toEqual(before);
      expect(readJournal(dir)).toBeUndefined();
    } finally {
      renameSync(`${db}.aside`, db);
    }
  });

  it('a member added while the first member settles halts the run before the next stop (exit 3); removed again, the re-run finishes', async () => {
    const before = pids();
    const run = opsctl(...UPGRADE, '--yes', '--settle', '15s', '--json');
    const first = await until(
      () => readJournal(dir)?.steps.find((s: any) => s.kind === 'settle' && s.status === 'running')?.member as string | undefined,
      90_000,
      'the first settle',
    );
    const ghost = await addGhost();
    const r = await run;
    try {
      expect(r.exitCode, String(r.stderr)).toBe(3);
      expect(r.stderr).toMatch(
        new RegExp(
          `not stopping (\\w+): the cluster's member list changed since pre-flight \\(\\(not started yet\\) \\(id \\d+, peer ${ghost.peer}\\) joined; now 4 members\\)`,
        ),
      );
      const j = readJournal(dir);
      const next = j.steps.find((s: any) => s.error)?.member;
      expect(next).toBeDefined();
      expect(next).not.toBe(first);
      expect(j.steps.filter((s: any) => s.member === next).every((s: any) => s.status === 'pending')).toBe(true);
      const i = members.findIndex((m) => m.name === next);
      expect(pids()[i]).toBe(before[i]);
    } finally {
      etcdctl('member', 'remove', ghost.id);
    }
    const again = await opsctl(...UPGRADE, '--yes', '--settle', '0s', '--json');
    expect(again.exitCode, String(again.stderr)).toBe(0);
    expect(JSON.parse(String(again.stdout))).toMatchObject({ status: 'done', resumed: true });
    expect((await opsctl('kv', 'health')).exitCode).toBe(0);
  }, 300_000);
});
