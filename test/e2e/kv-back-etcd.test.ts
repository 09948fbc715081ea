import { execa } from 'execa';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, PAUSED } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { startCluster, type SimulatedTestCluster } from '../framework/index.js';

/**
 * The ways back on real etcd (issue 28 item 4): a hop's restore point restored onto 3.5 with etcdutl,
 * a snapshot restored onto 3.6 (3.6's etcdctl has no snapshot restore). Binaries: Debian's 3.4,
 * 3.5.35 and 3.6.16 built by scripts/etcd-build.sh.
 *
 * The ladder killed inside its first hop, and the put-back after a 3.6 binary that exits at start, run in `npm run
 * test:crash` (OPSCTL_CRASH=all), not in CI: CI kills a real
 * ladder at every state of its second hop and between its hops (kv-crash-etcd), and inside a first hop on simulated
 * members (kv-crash-ladder-sim under OPSCTL_CRASH=all, kv-crash-hop-sim).
 */
const BUILDS = process.env.OPSCTL_ETCD_BUILDS ?? '/var/tmp/opsctl-etcd-builds';
export const dirs = {
  '3.4': process.env.OPSCTL_ETCD_34_DIR ?? '/usr/bin',
  '3.5': process.env.OPSCTL_ETCD_35_DIR ?? join(BUILDS, 'etcd-v3.5.35-linux-amd64'),
  '3.6': process.env.OPSCTL_ETCD_36_DIR ?? join(BUILDS, 'etcd-v3.6.16-linux-amd64'),
};
const missing = Object.entries(dirs).filter(([, d]) => !existsSync(join(d, 'etcd')));
const ready = missing.length === 0;
if (!ready) {
  const why = `missing ${missing.map(([v, d]) => `etcd ${v} in ${d}`).join(', ')} (build 3.5/3.6 with scripts/etcd-build.sh)`;
  if (process.env.OPSCTL_REQUIRE_E2E === '1') throw new Error(`real etcd 3.4-3.6 is required (OPSCTL_REQUIRE_E2E=1): ${why}`);
  process.stderr.write(`\n*** SKIPPING the real etcd ways back (restore onto 3.5/3.6): ${why} ***\n\n`);
}

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

function sandbox() {
  const cfg = tempConfigDir('opsctl-back-e2e-');
  const opsctl = (...args: string[]) =>
    execa(process.execPath, [BIN, ...args], { reject: false, env: { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1' }, extendEnv: true, timeout: 300_000 });
  let c: SimulatedTestCluster | undefined;
  cleanup = async () => {
    await c?.destroy();
    cfg.cleanup();
  };
  /** A 3-member sandbox of real etcd from `etcdBin` in this config dir (`extra`: more kv sandbox up flags). */
  const up = async (etcdBin: string, ...extra: string[]) =>
    void (c = await startCluster({ members: 'simulated', size: 3, etcdBin, configDir: cfg.dir, extra }));
  return { opsctl, up, dir: cfg.dir };
}

const FAST = ['--poll-interval', '100ms'];

/** `kv upgrade --to 3.6` onto `bin` with --on-failure rollback, its trials skipped (the binary `does` wrong only outside them). */
const rollbackUnproven = (bin: string, does: string) =>
  [
    ...['kv', 'upgrade', '--to', '3.6', '--yes', '--target-bin', bin, '--on-failure', 'rollback'],
    ...['--skip-trial', 'kv1,kv2,kv3', '--skip-reason', `the test: a binary that ${does} only outside the trial`, ...FAST],
  ] as const;

describe.runIf(ready)('kv restore on real etcd 3.5 and 3.6 (etcdutl), from a hop restore point of a ladder (the built binary)', () => {
  it('3.4 → 3.5.35 → 3.6.16, then a snapshot restored onto 3.6 and the 3.5 hop point onto 3.5: the keys of each point', async () => {
    const { opsctl, up, dir } = sandbox();
    // snapshot-count=2: the 3.5 members write a snapshot past the v2 entries 3.4 proposed (else etcdutl check v2store refuses 3.6)
    await up(dirs['3.4'], '--config', 'snapshot-count=2');
    for (let i = 0; i < 10; i++) expect((await opsctl('kv', 'put', `early/${i}`, `v${i}`)).exitCode).toBe(0);
    const lad = await opsctl('kv', 'upgrade', '--to', '3.6', '--yes', '--target-bin', `3.5=${dirs['3.5']}`, '--target-bin', `3.6=${dirs['3.6']}`, ...FAST);
    expect(lad.exitCode, String(lad.stderr)).toBe(0);

    // backups in proportion (issue 47 item 4, issue 58 item 3): each hop's data-dir copies are gone once it is done
    // (its restore point is the way back), and what is kept — each hop's restore point, a verified snapshot; the
    // other members' snapshots removed as the run finished — stays within 2x the data plus one WAL segment per
    // member (the copies kept before: 64 MB of preallocated WAL each, 384 MB here)
    expect(String(lad.stdout)).toMatch(/6 data-dir copies removed once their hops were done/);
    const rows = JSON.parse(String((await opsctl('kv', 'backups', 'list', '--json')).stdout)) as Array<{ kind: string; bytes: number; path: string }>;
    expect(rows.filter((r) => r.kind === 'data-dir')).toEqual([]);
    expect(rows.filter((r) => r.kind === 'snapshot')).toHaveLength(2);
    const members = readdirSync(join(dir, 'data', 'kv', 'sandbox')).filter((m) => /^kv\d$/.test(m));
    const data = members.reduce((n, m) => n + statSync(join(dir, 'data', 'kv', 'sandbox', m, 'data', 'member', 'snap', 'db')).size, 0);
    const kept = rows.reduce((n, r) => n + r.bytes, 0);
    expect(kept, `${kept} bytes of backups for ${data} bytes of data`).toBeLessThanOrEqual(2 * data + members.length * 64_000_000);
    expect(readdirSync(join(dir, 'data', 'kv', 'backups')).flatMap((c) => readdirSync(join(dir, 'data', 'kv', 'backups', c)))).toEqual([]);

    // onto 3.6: a snapshot of the 3.6 cluster, restored with 3.6's etcdutl
    const snap = join(dir, 'on36.db');
    expect((await opsctl('kv', 'snapshot', 'save', snap)).exitCode).toBe(0);
    expect((await opsctl('kv', 'put', 'late/0', 'after the snapshot')).exitCode).toBe(0);
    const r36 = await opsctl('kv', 'restore', '--snapshot', snap, '--to-version', '3.6', '--target-bin', dirs['3.6'], '--yes', ...FAST);
    expect(r36.exitCode, String(r36.stderr)).toBe(0);
    let v = JSON.parse(String((await opsctl('kv', 'version', '--json')).stdout));
    for (const m of v) expect(m.server).toBe('3.6.16');
    expect((await opsctl('kv', 'get', 'late/0', '--require')).exitCode).not.toBe(0);
    expect(String((await opsctl('kv', 'get', 'early/9')).stdout).trim()).toBe('v9');

    // onto 3.5: the restore point the ladder took before the hop 3.5 → 3.6, with the 3.5 binaries that hop's journal records
    expect((await opsctl('kv', 'put', 'late/1', 'after the ladder')).exitCode).toBe(0);
    const dry = await opsctl('kv', 'restore', '--from-hop', '3.5', '--dry-run');
    expect(dry.exitCode, String(dry.stderr)).toBe(0);
    expect(String(dry.stdout)).toContain(`${dirs['3.5']}/etcd`);
    const r35 = await opsctl('kv', 'restore', '--from-hop', '3.5', '--yes', ...FAST);
    expect(r35.exitCode, String(r35.stderr)).toBe(0);
    v = JSON.parse(String((await opsctl('kv', 'version', '--json')).stdout));
    for (const m of v) expect(m).toMatchObject({ server: '3.5.35', cluster: '3.5.0' });
    for (let i = 0; i < 10; i++) expect(String((await opsctl('kv', 'get', `early/${i}`)).stdout).trim()).toBe(`v${i}`);
    expect((await opsctl('kv', 'get', 'late/1', '--require')).exitCode).not.toBe(0);
  }, 300_000);
});

describe.runIf(ready)("kv downgrade --to 3.5 on real etcd: a 3-member 3.6.16 cluster back to 3.5.35 with 3.6's downgrade API (the built binary)", () => {
  it('a 3.5 binary of the wrong version is refused first; then every member on 3.5.35, cluster version 3.5, keys intact', async () => {
    const { opsctl, up } = sandbox();
    await up(dirs['3.6']);
    for (let i = 0; i < 10; i++) expect((await opsctl('kv', 'put', `down/${i}`, `v${i}`)).exitCode).toBe(0);
    // the 3.4 binaries given as 3.5: refused before anything changes
    const wrong = await opsctl('kv', 'downgrade', '--to', '3.5', '--yes', '--target-bin', `3.5=${dirs['3.4']}`);
    expect(wrong.exitCode).toBe(1);
    expect(String(wrong.stderr)).toMatch(/--target-bin 3\.5=.*its etcd is 3\.4\.\d+, not 3\.5\.x/);
    let v = JSON.parse(String((await opsctl('kv', 'version', '--json')).stdout));
    for (const m of v) expect(m).toMatchObject({ server: '3.6.16', cluster: '3.6.0' });

    const r = await opsctl('kv', 'downgrade', '--to', '3.5', '--yes', '--json', '--target-bin', `3.5=${dirs['3.5']}`, ...FAST);
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const rep = JSON.parse(String(r.stdout));
    expect(rep).toMatchObject({ kind: 'downgrade', status: 'done', from: '3.6', to: '3.5', binaryVersion: '3.5.35' });
    expect(rep.finished).toMatch(/the downgrade finished/);
    v = JSON.parse(String((await opsctl('kv', 'version', '--json')).stdout));
    for (const m of v) expect(m).toMatchObject({ server: '3.5.35', cluster: '3.5.0' });
    for (let i = 0; i < 10; i++) expect(String((await opsctl('kv', 'get', `down/${i}`)).stdout).trim()).toBe(`v${i}`);
  }, 300_000);
});

/** The ladder file and the executor journal of the one cluster under a config dir. */
function files(dir: string) {
  const jd = join(dir, 'data', 'kv', 'journals');
  const read = (f: string | undefined) => {
    try {
      return f && existsSync(f) ? JSON.parse(readFileSync(f, 'utf8')) : undefined;
    } catch {
      return undefined;
    }
  };
  const names = existsSync(jd) ? readdirSync(jd) : [];
  const lad = names.find((x) => x.endsWith('.ladder'));
  return {
    ladder: read(lad && join(jd, lad, 'ladder.json')),
    journal: read(
      names.find((x) => x.endsWith('.json')) &&
        join(
          jd,
          names.find((x) => x.endsWith('.json'))!,
        ),
    ),
  };
}

// (not registered in CI at all, as kv-crash-etcd's variants: CI reports no skipped test)
if (process.env.OPSCTL_CRASH === 'all')
  describe.runIf(ready)('kv upgrade ladder on real etcd: opsctl killed (SIGKILL) in the middle of the 3.4 → 3.5 hop, and the re-run finishes', () => {
    it('3.4 → 3.5.35 → 3.6.16: killed right after the second member of the 3.4 → 3.5 hop spawned; the re-run resumes that hop and member', async () => {
      const { opsctl, up, dir } = sandbox();
      await up(dirs['3.4'], '--config', 'snapshot-count=2');
      for (let i = 0; i < 10; i++) expect((await opsctl('kv', 'put', `kill/${i}`, `v${i}`)).exitCode).toBe(0);
      const bins = ['--target-bin', `3.5=${dirs['3.5']}`, '--target-bin', `3.6=${dirs['3.6']}`];
      // the run blocks right after its second member start (3.5.35 spawned, not yet recorded); SIGKILL lands there
      const child = execa(process.execPath, [PAUSED, 'kv', 'upgrade', '--to', '3.6', '--yes', ...bins, ...FAST], {
        reject: false,
        env: { OPSCTL_CONFIG_DIR: dir, NO_COLOR: '1', CI: '1', OPSCTL_PAUSE: 'pause:after-spawn:#2' },
        extendEnv: true,
        timeout: 300_000,
      });
      let err = '';
      child.stderr?.on('data', (d: Buffer) => (err += String(d)));
      const deadline = Date.now() + 240_000;
      while (!/opsctl-test: \S+ after-spawn/.test(err)) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the second member start was never reached: ${err}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      child.kill('SIGKILL');
      await child;
      const at = files(dir);
      expect(at.ladder).toMatchObject({ status: 'running', current: 0 });
      expect(at.journal).toMatchObject({ source: '3.4', target: '3.5', status: 'running' });
      const firstDone = at.journal.steps.find((x: any) => x.kind === 'settle' && x.status === 'done')?.member;
      expect(firstDone).toBeTruthy();
      const startedAt = at.journal.steps.find((x: any) => x.id === `${firstDone}/start`).startedAt;

      const r = await opsctl('kv', 'upgrade', '--to', '3.6', '--yes', '--json', ...FAST);
      expect(r.exitCode, String(r.stderr)).toBe(0);
      const rep = JSON.parse(String(r.stdout));
      expect(rep).toMatchObject({ kind: 'ladder', status: 'done', resumed: true });
      expect(rep.hops.map((h: any) => `${h.from}>${h.to}:${h.status}`)).toEqual(['3.4>3.5:done', '3.5>3.6:done']);
      // the member done before the kill was not started again
      expect(rep.hops[0].report.resumed).toBe(true);
      expect(rep.hops[0].report.steps.find((x: any) => x.id === `${firstDone}/start`).startedAt).toBe(startedAt);
      const v = JSON.parse(String((await opsctl('kv', 'version', '--json')).stdout));
      for (const m of v) expect(m).toMatchObject({ server: '3.6.16', cluster: '3.6.0' });
      for (let i = 0; i < 10; i++) expect(String((await opsctl('kv', 'get', `kill/${i}`)).stdout).trim()).toBe(`v${i}`);
    }, 300_000);
  });

// (in `npm run test:crash`, not in CI: CI puts a copy back on real etcd after a binary that exits at start on the
// 3.2 → 3.3 hop, kv-etcd-restore, and through the command driver twice, kv-backup-attempts-etcd; this file's case
// below keeps the data of a member that took part)
if (process.env.OPSCTL_CRASH === 'all')
  describe.runIf(ready)('kv upgrade --on-failure rollback on real etcd, on the 3.5 → 3.6 hop (the built binary)', () => {
    it('a 3.6 binary that never comes up: the first member is put back on 3.5.35 with its data, exit 3, the cluster healthy on 3.5', async () => {
      const { opsctl, up, dir } = sandbox();
      await up(dirs['3.5'], '--config', 'snapshot-count=2');
      for (let i = 0; i < 5; i++) expect((await opsctl('kv', 'put', `rb/${i}`, `v${i}`)).exitCode).toBe(0);
      // a release directory whose etcd says 3.6.16 but exits at once when started (a broken host binary)
      const broken = join(dir, 'broken-3.6');
      mkdirSync(broken);
      writeFileSync(
        join(broken, 'etcd'),
        '#!/bin/sh\nif [ "$1" = --version ]; then echo "etcd Version: 3.6.16"; exit 0; fi\necho "broken on purpose" >&2\nexit 1\n',
      );
      chmodSync(join(broken, 'etcd'), 0o755);
      // (the trial start would refuse it before any stop: overridden, so the member's own start fails)
      const r = await opsctl(...rollbackUnproven(broken, 'fails'), '--healthy-timeout', '20s');
      expect(r.exitCode, String(r.stderr)).toBe(3);
      expect(String(r.stderr)).toContain(`is back on ${dirs['3.5']}/etcd (data dir restored from `);
      const v = JSON.parse(String((await opsctl('kv', 'version', '--json')).stdout));
      for (const m of v) expect(m).toMatchObject({ server: '3.5.35', cluster: '3.5.0' });
      expect((await opsctl('kv', 'health')).exitCode).toBe(0);
      for (let i = 0; i < 5; i++) expect(String((await opsctl('kv', 'get', `rb/${i}`)).stdout).trim()).toBe(`v${i}`);
    }, 300_000);
  });

describe.runIf(ready)('--on-failure rollback after the target took part in the cluster (real etcd 3.5.35 → 3.6, the built binary)', () => {
  it('a member that joined and took entries on its start is put back on 3.5 with the data that start left, not its older copy: no panic, no write lost', async () => {
    const { opsctl, up, dir } = sandbox();
    await up(dirs['3.5']);
    const sandboxDir = join(dir, 'data', 'kv', 'sandbox');
    // "3.6" whose first start on a member's own config file runs 3.5.35: the member joins, publishes itself and
    // takes the writer's entries (its peers count on them), then the wait sees the wrong version and fails it
    const failLeft = join(dir, 'fail-left');
    writeFileSync(failLeft, '1\n');
    const odd = join(dir, 'odd-3.6');
    mkdirSync(odd);
    writeFileSync(
      join(odd, 'etcd'),
      [
        '#!/bin/sh',
        `case "$1" in --version) exec '${dirs['3.6']}/etcd' "$@" ;; esac`,
        `case "$2" in '${sandboxDir}'/*)`,
        `  n=$(cat '${failLeft}'); if [ "$n" -gt 0 ]; then echo $((n - 1)) >'${failLeft}'; exec '${dirs['3.5']}/etcd' "$@"; fi ;;`,
        'esac',
        `exec '${dirs['3.6']}/etcd' "$@"`,
        '',
      ].join('\n'),
    );
    chmodSync(join(odd, 'etcd'), 0o755);
    let writes = 0;
    let writing = true;
    const writer = (async () => {
      while (writing) if ((await opsctl('kv', 'put', `w/${writes}`, `v${writes}`)).exitCode === 0) writes += 1;
    })();
    const r = await opsctl(...rollbackUnproven(odd, 'misbehaves'));
    writing = false;
    await writer;
    const err = String(r.stderr);
    expect(r.exitCode, err).toBe(3);
    expect(err).toMatch(/kv\d runs 3\.5\.35, not 3\.6/);
    const m = /--on-failure rollback: (kv\d) is back on /.exec(err)?.[1];
    expect(m, err).toBeDefined();
    expect(err).toMatch(
      /its data dir kept as its start on 3\.6 left it, its copy \S+ not put back: its WAL was written after the copy \(\d+ records, raft index \d+ at term \d+ before its start, \d+ records, raft index \d+ at term \d+ now\)/,
    );
    // healthy on 3.5 with every acknowledged write, and the member's own log without the raft panic
    expect((await opsctl('kv', 'health')).exitCode).toBe(0);
    const v = JSON.parse(String((await opsctl('kv', 'version', '--json')).stdout)) as Array<{ server: string }>;
    expect(v.map((x) => x.server)).toEqual(['3.5.35', '3.5.35', '3.5.35']);
    expect(readFileSync(join(sandboxDir, m!, `${m}.log`), 'utf8')).not.toMatch(/out of range|panic/);
    expect(writes).toBeGreaterThan(0);
    const got = await opsctl('kv', 'get', 'w/', '--prefix', '--keys-only', '--json');
    expect(got.exitCode, String(got.stderr)).toBe(0);
    expect((JSON.parse(String(got.stdout)) as { count: number }).count).toBeGreaterThanOrEqual(writes);
    // the identical command, the binary sound now: done on 3.6
    const again = await opsctl('kv', 'upgrade', '--to', '3.6', '--yes', '--target-bin', odd, ...FAST);
    expect(again.exitCode, String(again.stderr)).toBe(0);
  }, 300_000);
});
