import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { startCluster, type RealTestCluster } from '../framework/index.js';
import { etcdLadderDirs } from '../helpers/etcd-releases.js';

/** Bytes on disk, as `du -sB1` counts them. */
const du = (p: string) => Number(execFileSync('du', ['-sB1', p]).toString().split('\t')[0]);

interface Row {
  run: string;
  kind: string;
  member: string;
  bytes: number | null;
  size: string;
  sizeUnknown: string | null;
  host: string;
  path: string;
}
interface Tally {
  bytes: number;
  snapshots: number;
  copies: number;
  onHosts: number;
  unknown: number;
}
interface JournalFile {
  id: string;
  restorePoint: { file: string };
  snapshots: Array<{ member: string; file: string; bytes: number; removed?: string }>;
  dataCopies: Array<{ member: string; run: string; status: string; path?: string; host?: string; bytes?: number; sizeUnknown?: string }>;
}

/**
 * Issue 58, item 3, through the built binary on real etcd 3.5.35 → 3.6.16 and the command driver: the backup
 * template's data-dir copies measured on their hosts (the members run here: `sh -s` reaches them), listed with
 * their sizes and counted in the run's totals; a finished run keeps only its restore point of its snapshots and
 * says what its backups hold; `kv backups prune` removes the copies on the hosts through the cluster file's
 * drop-backup template, and without the file (or the template) refuses before anything is removed.
 */
const dirs = etcdLadderDirs();

describe.runIf(Boolean(dirs))('backups in proportion and in sight: host copies measured, listed, pruned (real etcd, command driver)', () => {
  const cfg = tempConfigDir('opsctl-backups-hosts-');
  const env = { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1' };
  const opsctl = (...args: string[]) => runBin(args, { env, timeout: 300_000 });
  const FAST = ['--poll-interval', '100ms', '--healthy-timeout', '60s', '--stop-timeout', '30s', '--settle', '0s'];
  let c: RealTestCluster;
  /** The cluster file without a drop-backup template (the copies stay on the hosts), and one with it. */
  let keeps: string;
  let drops: string;
  const journalDir = join(cfg.dir, 'data', 'kv', 'journals');
  const journal = (): JournalFile => {
    const f = readdirSync(journalDir).find((x) => x.endsWith('.json'))!;
    return JSON.parse(readFileSync(join(journalDir, f), 'utf8')) as JournalFile;
  };
  const copyDir = (member: string, run: string) => join(c.real.dir, member, `data.bak-${run}`);
  const list = async (): Promise<Row[]> => {
    const r = await opsctl('kv', 'backups', 'list', '--json');
    expect(r.exitCode, String(r.stderr)).toBe(0);
    return JSON.parse(String(r.stdout)) as Row[];
  };
  let run1: JournalFile;

  beforeAll(async () => {
    const d = (x: string) => `${c.real.dir}/{name}/${x}`;
    const backup = () => `backup: cp -a --sparse=always ${d('data')} ${d('data.bak-{run}')}`;
    c = await startCluster({
      members: 'real',
      size: 3,
      version: '3.5',
      bins: { '3.5': dirs!.v35, '3.6': dirs!.v36 },
      configDir: cfg.dir,
      file: (real) => ({ name: 'keeps.yaml', extra: [`backup: cp -a --sparse=always ${real.dir}/{name}/data ${real.dir}/{name}/data.bak-{run}`] }),
    });
    keeps = c.file;
    drops = c.clusterFile({ name: 'drops.yaml', extra: [backup(), `dropBackup: rm -rf ${d('data.bak-{run}')}`] });
    // about 0.9 MB of values, as the database
    const value = 'v'.repeat(8000);
    for (let i = 0; i < 110; i++) c.real.etcdctl(dirs!.v35, ['put', `k/${i}`, value]);
  }, 180_000);

  afterAll(async () => {
    await c?.destroy();
    cfg.cleanup();
  });

  it('a finished run measures its copies on the hosts, keeps its restore point only, and says what it made and what its backups hold', async () => {
    const r = await opsctl('kv', 'upgrade', '--to', '3.6', '--yes', '--cluster', keeps, ...FAST, '--json');
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const out = JSON.parse(String(r.stdout)) as { backups: { made: Tally; held: Tally; keeps: string } };
    run1 = journal();

    // each copy measured where it is: its path on the host and du's bytes there
    expect(run1.dataCopies.map((x) => x.member).sort()).toEqual(c.members.map((m) => m.name));
    for (const x of run1.dataCopies) {
      expect(x).toMatchObject({ status: 'done', run: run1.id, host: '127.0.0.1', path: copyDir(x.member, run1.id) });
      expect(x.sizeUnknown).toBeUndefined();
      expect(x.bytes, x.member).toBe(du(copyDir(x.member, run1.id)));
      expect(x.bytes!).toBeGreaterThan(100_000);
    }
    const copies = run1.dataCopies.reduce((n, x) => n + x.bytes!, 0);

    // three snapshots taken, the restore point kept, the other two removed and marked
    expect(run1.snapshots).toHaveLength(3);
    const kept = run1.snapshots.filter((s) => !s.removed);
    expect(kept.map((s) => s.file)).toEqual([run1.restorePoint.file]);
    for (const s of run1.snapshots) expect(existsSync(s.file), s.file).toBe(!s.removed);
    const snapDir = join(cfg.dir, 'data', 'kv', 'snapshots');
    const onDisk = readdirSync(snapDir).flatMap((k) => readdirSync(join(snapDir, k)));
    expect(onDisk).toEqual([`${run1.id}-${kept[0]!.member}.db`]);

    // made: every snapshot and copy; held: the restore point and the copies still on the hosts
    expect(out.backups.made).toEqual({
      bytes: run1.snapshots.reduce((n, s) => n + s.bytes, 0) + copies,
      snapshots: 3,
      copies: 3,
      onHosts: 3,
      unknown: 0,
    });
    expect(out.backups.held).toEqual({ bytes: du(run1.restorePoint.file) + copies, snapshots: 1, copies: 3, onHosts: 3, unknown: 0 });
    expect(out.backups.keeps).toMatch(/^a finished run keeps its restore point .* removes the snapshots taken before its later stops/);
    console.log(
      `[figures] run 1 (3.5.35 -> 3.6.16, ${du(run1.restorePoint.file)} byte db): made ${out.backups.made.bytes} bytes ` +
        `(snapshots ${out.backups.made.bytes - copies}, host copies ${copies}); held ${out.backups.held.bytes} bytes (restore point ${du(run1.restorePoint.file)})`,
    );
  }, 300_000);

  it('kv backups list shows each host copy with its size on its host, and counts them', async () => {
    const rows = (await list()).filter((x) => x.run === run1.id);
    const onHosts = rows.filter((x) => x.kind === 'host-copy');
    expect(onHosts.map((x) => x.member).sort()).toEqual(c.members.map((m) => m.name));
    for (const x of onHosts) {
      expect(x).toMatchObject({ host: '127.0.0.1', sizeUnknown: null, path: `127.0.0.1:${copyDir(x.member, run1.id)}` });
      expect(x.bytes).toBe(du(copyDir(x.member, run1.id)));
      expect(x.size).toMatch(/^\d+\.\d (kB|MB)$/);
    }
    expect(rows.filter((x) => x.kind === 'snapshot').map((x) => x.path)).toEqual([run1.restorePoint.file]);
    const text = await opsctl('kv', 'backups', 'list');
    const bytes = onHosts.reduce((n, x) => n + x.bytes!, 0);
    expect(String(text.stderr)).toContain("and 3 data-dir copies on the members' hosts (127.0.0.1), made by the driver's backup template: ");
    expect(String(text.stderr)).toContain(`(${bytes} bytes) as du measured them there`);
  }, 120_000);

  it("a second run's text report says what it made and what its backups hold; the first run's copies stay listed", async () => {
    const r = await opsctl('kv', 'upgrade', '--to', '3.6', '--allow-same-version', '--yes', '--cluster', keeps, ...FAST);
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const run2 = journal();
    expect(run2.id).not.toBe(run1.id);
    const stdout = String(r.stdout);
    expect(stdout).toMatch(/\nbackups made: \d+\.\d (kB|MB) \(3 snapshots, 3 data-dir copies on the members' hosts\) in /);
    const held = du(run2.restorePoint.file) + run2.dataCopies.reduce((n, x) => n + du(x.path!), 0);
    expect(stdout).toContain(`\nbackups held: `);
    expect(stdout).toContain(
      `(${held} bytes) on disk in 1 snapshot, 3 data-dir copies on the members' hosts; by default a finished run keeps its restore point`,
    );
    // the first run's record of its copies outlived its journal: both runs' copies are listed
    const rows = await list();
    for (const id of [run1.id, run2.id])
      expect(
        rows.filter((x) => x.run === id && x.kind === 'host-copy'),
        id,
      ).toHaveLength(3);
  }, 300_000);

  it('prune without --cluster, or with a driver that has no drop-backup template, refuses and removes nothing', async () => {
    const before = await list();
    const bare = await opsctl('kv', 'backups', 'prune', '--keep', '1', '--yes');
    expect(bare.exitCode, String(bare.stderr)).toBe(2);
    expect(String(bare.stderr)).toContain("not pruning: 3 data-dir copies on the members' hosts");
    expect(String(bare.stderr)).toContain('--cluster was not given');
    expect(String(bare.stderr)).toContain('pass --cluster FILE');
    const noDrop = await opsctl('kv', 'backups', 'prune', '--keep', '1', '--yes', '--cluster', keeps);
    expect(noDrop.exitCode, String(noDrop.stderr)).toBe(2);
    expect(String(noDrop.stderr)).toContain(`the driver of ${keeps} has no drop-backup template`);
    expect(await list()).toEqual(before);
    for (const x of run1.dataCopies) expect(existsSync(copyDir(x.member, run1.id))).toBe(true);
    expect(existsSync(run1.restorePoint.file)).toBe(true);
  }, 120_000);

  it("prune --cluster removes the older run's copies on their hosts through the drop-backup template, and what it freed is what du measured", async () => {
    const going = run1.dataCopies.map((x) => copyDir(x.member, run1.id));
    const freed = going.reduce((n, p) => n + du(p), 0) + du(run1.restorePoint.file);
    const r = await opsctl('kv', 'backups', 'prune', '--keep', '1', '--yes', '--cluster', drops, '--json');
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const out = JSON.parse(String(r.stdout)) as { bytes: number; removed: Array<{ run: string }>; onHosts: Array<{ member: string; removed: boolean }> };
    expect(out.removed.map((x) => x.run)).toEqual([run1.id]);
    expect(out.bytes).toBe(freed);
    expect(out.onHosts.map((x) => [x.member, x.removed]).sort()).toEqual(c.members.map((m) => [m.name, true]));
    for (const p of going) expect(existsSync(p), p).toBe(false);
    expect(existsSync(run1.restorePoint.file)).toBe(false);
    // the newer run's copies and restore point stay; the removed ones are listed no more
    const rows = await list();
    expect([...new Set(rows.map((x) => x.run))]).toEqual([journal().id]);
    expect(rows.filter((x) => x.kind === 'host-copy')).toHaveLength(3);
    for (const x of journal().dataCopies) expect(existsSync(x.path!)).toBe(true);
    const again = await opsctl('kv', 'backups', 'prune', '--keep', '1', '--cluster', drops);
    expect(String(again.stderr)).toContain('nothing to prune: 1 run(s) kept');
  }, 120_000);
});
