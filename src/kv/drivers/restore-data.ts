import { existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MemberSpec, SandboxSpec } from '../cluster/cluster-file.js';
import type { MemberTarget, RestoreRequest } from './driver.js';
import { moveTree } from './backup-copy.js';
import { compareMinor, minor } from '../cluster/parse.js';

type Exec = typeof import('execa').execa;

/** Where a member's old data dir is kept: renamed, never deleted. */
export function keptDir(dataDir: string, run: string): string {
  return `${dataDir}.before-restore-${run}`;
}

/** Before anything is stopped: the member's data dir must exist where the driver says it is. */
export function checkLocalDataDir(m: MemberSpec): void {
  const d = m.dataDir;
  if (!d) throw new Error(`member ${m.name}: no data directory is known`);
  if (!existsSync(d)) throw new Error(`member ${m.name}: its data directory ${d} does not exist`);
  if (!statSync(d).isDirectory()) throw new Error(`member ${m.name}: ${d} is not a directory`);
}

/** Where a member's restored data is built before any member is stopped. */
export function stagedDir(dataDir: string, run: string): string {
  return `${dataDir}.restore-${run}`;
}

/**
 * Builds a local etcd member's restored data dir at `staged`, beside the live one, while the cluster
 * still runs (so a failure here changes nothing): real etcd's `snapshot restore` (the target release's
 * etcdutl from 3.5 on, its etcdctl before) with the member's name, peer URL, the initial cluster and the
 * new token. (A simulated member's is its program's: kv/sandbox/members.ts.)
 */
export async function etcdRestore(m: MemberSpec, r: RestoreRequest, staged: string, exec: Exec): Promise<void> {
  const tool = restoreTool(r.target);
  if (!existsSync(tool.path)) {
    throw new Error(
      `${tool.path} does not exist: ${tool.name === 'etcdutl' ? `etcd ${r.target.version} restores snapshots with etcdutl (3.6's etcdctl has no snapshot restore; 3.5's is deprecated)` : 'the target release ships etcdctl'}; give the release directory with --target-bin DIR`,
    );
  }
  const res = await exec(tool.path, restoreArgs(r, { snapshot: r.snapshot, dataDir: staged }), {
    env: { ETCDCTL_API: '3', PATH: '/usr/local/bin:/usr/bin:/bin' },
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
    timeout: 120_000,
  });
  if (res.exitCode !== 0) {
    rmSync(staged, { recursive: true, force: true });
    throw new Error(`${tool.path} snapshot restore for ${m.name} failed (exit ${res.exitCode}): ${String(res.stderr).trim().split('\n').pop()}`);
  }
}

/** The words of `snapshot restore` for a member of the restore (etcdutl's and etcdctl's alike): its name, peer URL, the whole initial cluster, the new token. */
export function restoreArgs(r: RestoreRequest, at: { snapshot: string; dataDir: string }): string[] {
  return [
    'snapshot',
    'restore',
    at.snapshot,
    '--name',
    r.name,
    '--initial-cluster',
    r.initialCluster,
    '--initial-cluster-token',
    r.token,
    '--initial-advertise-peer-urls',
    r.peerUrl,
    '--data-dir',
    at.dataDir,
  ];
}

/**
 * The tool that rebuilds a data dir from a snapshot for a target release: etcdutl from 3.5 on (3.6's
 * etcdctl has no `snapshot restore`; 3.5's still has it, deprecated in favour of etcdutl), etcdctl
 * (ETCDCTL_API=3) before 3.5.
 */
export function restoreTool(target: MemberTarget): { name: 'etcdutl' | 'etcdctl'; path: string } {
  const name = compareMinor(minor(target.version) ?? target.version, '3.5') >= 0 ? 'etcdutl' : 'etcdctl';
  return { name, path: join(target.binDir ?? '', name) };
}

/** Drops a staged dir that was never swapped in (a refused or declined restore). */
export function dropStaged(m: MemberSpec, run: string): void {
  if (m.dataDir) rmSync(stagedDir(m.dataDir, run), { recursive: true, force: true });
}

/**
 * A stopped local member switched to its staged data: the old data dir renamed aside (kept, never
 * deleted), the staged one renamed into place; its config file gets the new token. Safe to redo for the
 * same run (a resume after a kill): a swap already made is seen as made (the kept dir there, nothing
 * staged) and never made twice over the restored data; a kill between the two renames is finished.
 * A member with its own WAL dir (`walDir`): its old WAL goes with the kept data dir (its member/wal), and
 * the restored WAL (the restored dir's member/wal) into the WAL dir, which is what the member reads.
 */
export function swapLocalData(sandbox: SandboxSpec, m: MemberSpec, r: RestoreRequest, walDir?: string): string {
  const dataDir = m.dataDir!;
  const kept = keptDir(dataDir, r.run);
  const staged = stagedDir(dataDir, r.run);
  const swapped = existsSync(kept) && !existsSync(staged);
  if (!swapped) {
    if (!existsSync(staged))
      throw new Error(`member ${m.name}: the restored data ${staged} is missing (built before the first stop): its data dir ${dataDir} was left as it is`);
    if (existsSync(kept) && existsSync(dataDir))
      throw new Error(`member ${m.name}: ${dataDir}, ${kept} and ${staged} all exist: not a state kv restore leaves; check which holds what`);
    if (!existsSync(kept)) renameSync(dataDir, kept);
    renameSync(staged, dataDir);
  }
  let wal = '';
  const restoredWal = join(dataDir, 'member', 'wal');
  if (walDir && existsSync(restoredWal)) {
    // (redone after a kill: the old WAL already kept, or not yet; the restored one not yet moved)
    if (existsSync(walDir)) moveTree(walDir, existsSync(join(kept, 'member', 'wal')) ? `${walDir}.before-restore-${r.run}` : join(kept, 'member', 'wal'));
    moveTree(restoredWal, walDir);
    wal = `; its WAL restored into ${walDir}, the old one kept with the old data`;
  }
  if (m.configFile && existsSync(m.configFile)) {
    const text = readFileSync(m.configFile, 'utf8');
    writeFileSync(m.configFile, text.replace(/^initial-cluster-token: .*$/m, `initial-cluster-token: ${r.token}`));
  }
  sandbox.token = r.token;
  return `restored into ${dataDir}${swapped ? ' (by this restore already)' : ''}; old data kept in ${kept}${wal}`;
}
