import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { until } from '../helpers/kv.js';
import { startCluster, type SimulatedTestCluster } from '../framework/index.js';
import { execa } from 'execa';

/** Bytes on disk, as kv backups lists them. */
const du = (paths: string[]) => paths.reduce((n, p) => n + Number(execFileSync('du', ['-sB1', p]).toString().split('\t')[0]), 0);

interface Row {
  cluster: string;
  run: string;
  runKind: string;
  kind: string;
  member: string;
  bytes: number;
  path: string;
  journalStatus: string | null;
  neededBy: string | null;
}

/**
 * `kv backups list / prune` and `kv sandbox down` through the built binary on a sandbox of simulated
 * members: two upgrades with a restore between (three runs of backups), an interrupted third run that a
 * prune must not touch, then prune and sandbox down, checking the files really go and the sizes they
 * print are what du measured.
 */
describe('kv backups list / prune, and sandbox down removing its backups (built binary, simulated sandbox)', () => {
  const { dir, cleanup } = tempConfigDir('opsctl-kv-backups-');
  const env = { OPSCTL_CONFIG_DIR: dir };
  const opsctl = (...args: string[]) => runBin(args, { env, timeout: 180_000 });
  const list = async (): Promise<Row[]> => {
    const r = await opsctl('kv', 'backups', 'list', '--json');
    expect(r.exitCode, String(r.stderr)).toBe(0);
    return JSON.parse(String(r.stdout)) as Row[];
  };
  let c: SimulatedTestCluster | undefined;
  afterAll(async () => {
    await c?.destroy();
    cleanup();
  }, 300_000);

  it('lists every backup of 2 upgrades and a restore, refuses to prune an interrupted run, prunes the rest, and sandbox down frees its own', async () => {
    const ok = async (...args: string[]) => {
      const r = await opsctl(...args);
      expect(r.exitCode, `${args.join(' ')}: ${String(r.stderr)}`).toBe(0);
      return r;
    };
    c = await startCluster({ members: 'simulated', size: 3, version: '3.2', configDir: dir });
    expect((await list()).length).toBe(0);
    await ok('kv', 'put', 'k1', 'v1');
    // the first with --keep-backups: its data-dir copies stay once the hop is done; the second's go then
    const first = await ok('kv', 'upgrade', '--to', '3.3', '--yes', '--keep-backups');
    expect(String(first.stdout)).toMatch(/kv1: data-dir copy kept \(--keep-backups\): /);
    const snapshot = String((await ok('kv', 'status', '--jq', '.[0].restorePoint.file')).stdout).trim();
    await ok('kv', 'restore', '--snapshot', snapshot, '--to-version', '3.2', '--yes');
    const second = await ok('kv', 'upgrade', '--to', '3.3', '--yes');
    expect(String(second.stdout)).toContain(
      "3 data-dir copies removed once their hops were done (the hop's restore point is the way back; --keep-backups keeps them)",
    );

    const rows = await list();
    const runs = [...new Set(rows.map((r) => r.run))];
    expect(runs).toHaveLength(3);
    // Newest first: upgrade 2, the restore, upgrade 1.
    expect(runs.map((run) => rows.find((r) => r.run === run)!.runKind)).toEqual(['upgrade', 'restore', 'upgrade']);
    const kinds = (run: string) => rows.filter((r) => r.run === run).map((r) => `${r.kind} ${r.member}`);
    // each finished upgrade keeps its restore point (the snapshot before its first stop) of its three snapshots;
    // --keep-backups keeps all three, with the data-dir copies
    expect(kinds(runs[0]!)).toHaveLength(1);
    expect(kinds(runs[0]!)[0]).toMatch(/^snapshot kv\d$/);
    expect(String(second.stdout)).toMatch(/\nbackups made: .* \(3 snapshots, 3 data-dir copies here\)/);
    expect(String(second.stdout)).toMatch(/\nbackups held: .* on disk in 1 snapshot; by default a finished run keeps its restore point/);
    expect(kinds(runs[2]!).sort()).toEqual(['data-dir kv1', 'data-dir kv2', 'data-dir kv3', 'snapshot kv1', 'snapshot kv2', 'snapshot kv3']);
    expect(kinds(runs[1]!).sort()).toEqual(['before-restore kv1', 'before-restore kv2', 'before-restore kv3']);
    expect(rows.find((r) => r.run === runs[0])!.journalStatus).toBe('done');
    expect(snapshot).toBe(rows.find((r) => r.run === runs[2] && r.path === snapshot)?.path);
    for (const r of rows) expect(r.bytes, r.path).toBe(du([r.path]));

    // A third run, interrupted while it settles after its first member: its backups are the way back.
    const third = execa(process.execPath, [BIN, 'kv', 'upgrade', '--to', '3.3', '--allow-same-version', '--settle', '10m', '--yes'], {
      env: { NO_COLOR: '1', ...env },
      reject: false,
    });
    const journalDir = join(dir, 'data', 'kv', 'journals');
    await until(
      () => {
        const files = existsSync(journalDir) ? readdirSync(journalDir).filter((f) => f.endsWith('.json')) : [];
        const j = files.length
          ? (JSON.parse(readFileSync(join(journalDir, files[0]!), 'utf8')) as { id: string; steps: { kind: string; status: string }[] })
          : undefined;
        return j && !runs.includes(j.id) && j.steps.some((s) => s.kind === 'settle' && s.status === 'running');
      },
      120_000,
      'the third upgrade settling after its first member',
    );
    third.kill('SIGINT');
    expect((await third).exitCode).toBe(130);
    const withThird = await list();
    const thirdRun = withThird.find((r) => !runs.includes(r.run))!;
    expect(thirdRun.journalStatus).toBe('interrupted');
    const refused = await opsctl('kv', 'backups', 'prune', '--keep', '0', '--yes');
    expect(refused.exitCode).toBe(1);
    expect(String(refused.stderr)).toContain(`${thirdRun.run} is needed by ${join(journalDir, `${thirdRun.cluster}.json`)}`);
    expect(String(refused.stderr)).toContain('is interrupted');
    for (const r of withThird) expect(existsSync(r.path), r.path).toBe(true);
    // Finish it (resume, no settle), so its run is done: 4 runs.
    await ok('kv', 'upgrade', '--to', '3.3', '--allow-same-version', '--settle', '0s', '--yes');

    // --dry-run and no --yes change nothing.
    const all = await list();
    const dry = await opsctl('kv', 'backups', 'prune', '--dry-run');
    expect(dry.exitCode, String(dry.stderr)).toBe(0);
    expect(String(dry.stderr)).toContain('would remove the backups of 3 run(s)');
    expect((await opsctl('kv', 'backups', 'prune')).exitCode).toBe(2);
    for (const r of all) expect(existsSync(r.path), r.path).toBe(true);

    // Keep the newest run (the default): the other three go, and what it says it freed is what du saw.
    const keepRun = all[0]!.run;
    expect(keepRun).toBe(thirdRun.run);
    const going = all.filter((r) => r.run !== keepRun).map((r) => r.path);
    const before = du(going);
    const pruned = await opsctl('kv', 'backups', 'prune', '--yes', '--json');
    expect(pruned.exitCode, String(pruned.stderr)).toBe(0);
    const out = JSON.parse(String(pruned.stdout)) as { bytes: number; removed: { run: string }[]; kept: string[] };
    expect(out.bytes).toBe(before);
    expect(out.removed.map((r) => r.run).sort()).toEqual(runs.slice().sort());
    expect(out.kept).toEqual([keepRun]);
    for (const p of going) expect(existsSync(p), p).toBe(false);
    const left = await list();
    expect([...new Set(left.map((r) => r.run))]).toEqual([keepRun]);
    const human = await opsctl('kv', 'backups', 'prune');
    expect(String(human.stderr)).toContain('nothing to prune: 1 run(s) kept');

    // sandbox down removes the sandbox's own backups, saying how much it freed.
    const leftBytes = du(left.map((r) => r.path));
    const down = await opsctl('kv', 'sandbox', 'down', '--json');
    expect(down.exitCode, String(down.stderr)).toBe(0);
    // --json says it too: the runs, the bytes freed and every path removed
    expect(JSON.parse(String(down.stdout)).backupsRemoved).toMatchObject({ runs: 1, bytes: leftBytes });
    expect(JSON.parse(String(down.stdout)).backupsRemoved.paths.sort()).toEqual(left.map((r) => r.path).sort());
    expect(String(down.stderr)).toContain(`removed the sandbox's backups: 1 run(s), ${left.length} item(s)`);
    expect(String(down.stderr)).toContain(`(${leftBytes} bytes) freed`);
    for (const r of left) expect(existsSync(r.path), r.path).toBe(false);
    expect((await list()).length).toBe(0);
  }, 300_000);
});
