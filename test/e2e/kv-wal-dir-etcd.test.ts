import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { startCluster, type SimulatedTestCluster } from '../framework/index.js';
import { etcdLadderDirs } from '../helpers/etcd-releases.js';
import { walV2Replay } from '../../src/kv/wal/v2-data.js';

/**
 * Members that keep their WAL in a directory of their own (`wal-dir`): every tool opsctl runs on a
 * member's data reads it there. Before, `etcdutl check v2store` ran without --wal-dir ("open
 * DATA/member/wal: no such file or directory"), so the v2store fix restarted every member twice per round
 * (12 stops over two rounds) and halted with "something still writes v2 requests"; the 3.7 WAL check said
 * "not checked" (no DATA/member/wal) and the 3.7 data trial then panicked on the v2 requests it could not
 * see. A real-etcd sandbox (the local driver: the sandbox's own copies, put-back, checks and restore),
 * 3.5.35 → 3.6.16 → 3.7.3, each member with `wal-dir` in its config file.
 */
const dirs = etcdLadderDirs();

describe.runIf(Boolean(dirs))('members with their own wal-dir, 3.5.35 → 3.6.16 → 3.7.3 (real etcd sandbox)', () => {
  const cfg = tempConfigDir('opsctl-wal-dir-');
  const env = { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1' };
  const opsctl = (...args: string[]) => runBin(args, { env, timeout: 300_000 });
  const walRoot = mkdtempSync('/var/tmp/opsctl-wal-dir-e2e-');
  const wal = (m: string) => join(walRoot, `${m}-wal`);
  const data = (m: string) => join(cfg.dir, 'data', 'kv', 'sandbox', m, 'data');
  const MEMBERS = ['kv1', 'kv2', 'kv3'];
  // a 3.6 directory whose etcd fails a member's own start (its config file, not a trial's copy nor the rehearsal's
  // clone) while fail-left says so
  const wrapper = join(cfg.dir, 'etcd-3.6');
  const failFile = join(cfg.dir, 'fail-left');
  const stops = (err: string) => (err.match(/: stop: stopped/g) ?? []).length;
  const FAST = ['--poll-interval', '100ms', '--healthy-timeout', '60s', '--settle', '0s'];
  let c: SimulatedTestCluster | undefined;

  beforeAll(async () => {
    mkdirSync(wrapper);
    writeFileSync(
      join(wrapper, 'etcd'),
      [
        '#!/bin/sh',
        // (the cluster's members only: not the rehearsal's clone, whose network namespace is its own)
        `[ "$(readlink /proc/self/ns/net)" = '${readlinkSync('/proc/self/ns/net')}' ] || exec '${dirs!.v36}/etcd' "$@"`,
        `case "$*" in *'${join(cfg.dir, 'data', 'kv', 'sandbox')}/'*.conf.yml*)`,
        `  n=$(cat '${failFile}' 2>/dev/null || echo 0)`,
        `  if [ "$n" -gt 0 ]; then echo $((n - 1)) >'${failFile}'; echo "the test makes this start fail" >&2; exit 1; fi ;;`,
        'esac',
        `exec '${dirs!.v36}/etcd' "$@"`,
        '',
      ].join('\n'),
      { mode: 0o755 },
    );
    for (const tool of ['etcdctl', 'etcdutl']) symlinkSync(join(dirs!.v36, tool), join(wrapper, tool));
    c = await startCluster({
      members: 'simulated',
      size: 3,
      etcdBin: dirs!.v35,
      configDir: cfg.dir,
      extra: MEMBERS.flatMap((m) => ['--config', `${m}:wal-dir=${wal(m)}`]),
    });
    for (let i = 0; i < 20; i++) expect((await opsctl('kv', 'put', `k/${i}`, `v${i}`)).exitCode).toBe(0);
    for (const m of MEMBERS) {
      expect(readdirSync(wal(m)).some((f) => f.endsWith('.wal'))).toBe(true);
      expect(existsSync(join(data(m), 'member', 'wal'))).toBe(false);
    }
  }, 180_000);

  afterAll(async () => {
    await c?.destroy();
    cfg.cleanup();
    rmSync(walRoot, { recursive: true, force: true });
  });

  it('→ 3.6: etcdutl check v2store reads each WAL dir (no fix, no extra restart); a failed start is put back with its WAL; the copies hold the WAL', async () => {
    // the first member's first 3.6 start fails: --on-failure rollback puts its data dir and its WAL dir back
    writeFileSync(failFile, '1\n');
    const args = ['kv', 'upgrade', '--to', '3.6', '--yes', '--target-bin', wrapper, '--keep-backups', ...FAST];
    const first = await opsctl(...args, '--on-failure', 'rollback');
    const err1 = String(first.stderr);
    expect(first.exitCode, err1).toBe(3);
    // the whole plan rehearsed first on a clone whose WAL dirs are copies mounted over the members' own
    // (before: the clone's members opened the cluster members' WAL dirs and never became healthy)
    expect(err1).toMatch(/rehearsal: passed on a clone of the cluster/);
    const failed = /--on-failure rollback: (kv\d) is back on /.exec(err1)?.[1];
    expect(failed, err1).toBeDefined();
    expect(err1).toContain(`its member/wal into ${wal(failed!)}`);
    expect(stops(err1)).toBe(1);
    // the WAL the failed start ran on kept with its failed data dir; the member back on 3.5 with every key
    const kept = readdirSync(join(data(failed!), '..')).find((f) => f.startsWith('data.failed-'))!;
    expect(readdirSync(join(data(failed!), '..', kept, 'member', 'wal')).some((f) => f.endsWith('.wal'))).toBe(true);
    expect(readdirSync(wal(failed!)).some((f) => f.endsWith('.wal'))).toBe(true);
    expect(existsSync(join(data(failed!), 'member', 'wal'))).toBe(false);
    expect(String((await opsctl('kv', 'get', 'k/19', '--endpoints', endpointOf(failed!), '--consistency', 's')).stdout).trim()).toBe('v19');

    // the identical command: no v2store fix, one stop per member
    const r = await opsctl(...args, '--json', '--report', join(cfg.dir, 'to-3.6.html'));
    const err = String(r.stderr);
    expect(r.exitCode, err).toBe(0);
    expect(err).not.toMatch(/--fix-v2store|no such file or directory/);
    expect(stops(err)).toBe(3);
    const v2store = checksOf(r.stdout).filter((c) => c.rule === 'v2store-check');
    expect(v2store.map((c) => [c.member, c.status])).toEqual(MEMBERS.map((m) => [m, 'ok']));
    for (const c of v2store) expect(c.detail).toMatch(/etcdutl check v2store: No custom content found/);
    const v = JSON.parse(String((await opsctl('kv', 'version', '--json')).stdout)) as Array<{ server: string }>;
    expect(v.map((x) => x.server)).toEqual(['3.6.16', '3.6.16', '3.6.16']);
    // every data-dir copy of the hop holds the member's WAL as its member/wal (one copy, all a restore needs)
    const root = join(cfg.dir, 'data', 'kv', 'backups');
    const copies = readdirSync(root).flatMap((k) => readdirSync(join(root, k)).map((c) => join(root, k, c)));
    expect(copies.length).toBeGreaterThanOrEqual(3);
    for (const c of copies)
      expect(
        readdirSync(join(c, 'member', 'wal')).some((f) => f.endsWith('.wal')),
        c,
      ).toBe(true);
    for (const m of MEMBERS) expect(existsSync(join(data(m), 'member', 'wal'))).toBe(false);
  }, 600_000);

  it('→ 3.7: each WAL dir read for the v2 requests 3.7 cannot replay (never "not checked"); the WAL fix and the hop finish', async () => {
    // what the check will find, read here from each member's own WAL dir
    const before = MEMBERS.map((m) => walV2Replay({ dataDir: data(m), walDir: wal(m) }));
    for (const w of before) expect(w).toMatchObject({ count: expect.any(Number) });
    const r = await opsctl(
      'kv',
      'upgrade',
      '--to',
      '3.7',
      '--yes',
      '--target-bin',
      `3.7=${dirs!.v37}`,
      ...FAST,
      '--json',
      '--report',
      join(cfg.dir, 'to-3.7.html'),
    );
    const err = String(r.stderr);
    expect(r.exitCode, err).toBe(0);
    expect(err).not.toMatch(/does not exist|exited \(2\)/);
    expect(err).toMatch(/rehearsal: passed on a clone of the cluster/);
    // the checks of the hop as it ran (after the fix): each member's WAL read in its own WAL dir
    const replay = checksOf(r.stdout).filter((c) => c.rule === 'wal-v2-replay');
    expect(replay.map((c) => c.member)).toEqual(MEMBERS);
    for (const c of replay) {
      expect(c.status).not.toBe('not checked');
      expect(c.detail).toMatch(/v2 requests? .*after its newest snapshot \(index \d+\)/);
    }
    // the members whose WAL held some were restarted once on 3.6 with snapshot-count 1, the others not at all
    const fixed = MEMBERS.filter((_, i) => (before[i] as { count: number }).count > 0);
    for (const m of fixed) expect(err).toContain(`${m}: start on 3.6 with snapshot-count 1`);
    expect(stops(err)).toBe(3 + 2 * fixed.length);
    for (const m of MEMBERS) {
      expect(walV2Replay({ dataDir: data(m), walDir: wal(m) })).toMatchObject({ count: 0 });
      expect(existsSync(join(data(m), 'member', 'wal'))).toBe(false);
    }
    const v = JSON.parse(String((await opsctl('kv', 'version', '--json')).stdout)) as Array<{ server: string }>;
    expect(v.map((x) => x.server)).toEqual(['3.7.3', '3.7.3', '3.7.3']);
    for (let i = 0; i < 20; i++) expect(String((await opsctl('kv', 'get', `k/${i}`)).stdout).trim()).toBe(`v${i}`);
  }, 600_000);

  it('kv restore: each member restored with its WAL in its WAL dir (the old WAL kept with the old data); a key written after the snapshot is gone', async () => {
    const snap = join(cfg.dir, 'before.db');
    expect((await opsctl('kv', 'snapshot', 'save', snap)).exitCode).toBe(0);
    expect((await opsctl('kv', 'put', 'after/snapshot', 'lost')).exitCode).toBe(0);
    const r = await opsctl('kv', 'restore', '--snapshot', snap, '--to-version', '3.7', '--target-bin', dirs!.v37, '--yes', '--healthy-timeout', '60s');
    expect(r.exitCode, String(r.stderr)).toBe(0);
    for (const m of MEMBERS) {
      const kept = readdirSync(join(data(m), '..')).find((f) => f.startsWith('data.before-restore-'))!;
      expect(readdirSync(join(data(m), '..', kept, 'member', 'wal')).some((f) => f.endsWith('.wal'))).toBe(true);
      expect(readdirSync(wal(m)).some((f) => f.endsWith('.wal'))).toBe(true);
      expect(existsSync(join(data(m), 'member', 'wal'))).toBe(false);
    }
    expect(String((await opsctl('kv', 'get', 'after/snapshot')).stdout).trim()).toBe('');
    for (let i = 0; i < 20; i++) expect(String((await opsctl('kv', 'get', `k/${i}`)).stdout).trim()).toBe(`v${i}`);
    const v = JSON.parse(String((await opsctl('kv', 'version', '--json')).stdout)) as Array<{ server: string }>;
    expect(v.map((x) => x.server)).toEqual(['3.7.3', '3.7.3', '3.7.3']);
  }, 300_000);

  /** The check rows of a run's report (--report FILE --json). */
  function checksOf(stdout: unknown): Array<{ rule: string; member?: string; status: string; detail: string }> {
    const rep = JSON.parse(String(stdout)) as { report?: { checks?: Array<{ rule: string; member?: string; status: string; detail: string }> } };
    expect(rep.report?.checks?.length, JSON.stringify(Object.keys(rep.report ?? {}))).toBeGreaterThan(0);
    return rep.report!.checks!;
  }

  /** A member's client URL, from the sandbox's file. */
  function endpointOf(member: string): string {
    const spec = JSON.parse(readFileSync(join(cfg.dir, 'data', 'kv', 'sandbox', 'sandbox.json'), 'utf8')) as {
      members: Array<{ name: string; endpoint: string }>;
    };
    return spec.members.find((m) => m.name === member)!.endpoint;
  }
});
