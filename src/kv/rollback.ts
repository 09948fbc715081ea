import { join } from 'node:path';
import { OpsError } from '../core/errors.js';
import type { ClusterSpec } from './cluster.js';
import { KvClient } from './client.js';
import type { MemberDriver } from './drivers/driver.js';
import { lockJournal, readJournal, startedMembers, writeJournal } from './journal.js';
import { observeCluster } from './observe.js';
import { minor } from './parse.js';
import type { StepReporter, Timeouts } from './executor.js';
import { waitFor } from './wait.js';

export interface RollbackOptions {
  cluster: ClusterSpec;
  driver: MemberDriver;
  dataDir: string;
  timeouts: Timeouts;
  now: () => number;
  reporter: StepReporter;
  lockStaleMs?: number;
}

export interface RollbackReport {
  status: 'rolled-back' | 'nothing-to-do';
  journal: string;
  members: Array<{ name: string; from: string; to: string; ms: number }>;
}

/**
 * Restarts every member the recorded upgrade moved to the target back on its previous version,
 * one at a time (each must be healthy before the next). Only while some member still runs the
 * source version: once the cluster version moved to the target, a downgrade is impossible.
 */
export async function runRollback(o: RollbackOptions): Promise<RollbackReport> {
  const file = join(o.dataDir, 'kv', 'journals', `${o.cluster.key}.json`);
  const j = readJournal(file);
  if (!j) throw new OpsError(`no kv upgrade is recorded for this cluster (${file})`, 1, { code: 'no_journal', hint: 'roll-back undoes an upgrade opsctl started; there is none here' });
  if (j.source === j.target) throw new OpsError('the recorded run was a rolling restart on the same version: nothing to roll back', 1);
  const unlock = await lockJournal(file, o.lockStaleMs ?? 4000).catch((err) => {
    throw new OpsError(`another kv upgrade or roll-back of this cluster is running: ${(err as Error).message}`, 1, { code: 'locked', hint: 'wait for it to finish' });
  });
  try {
    const t = o.timeouts;
    const obs = await observeCluster(o.cluster.members, { timeoutMs: t.requestMs });
    const cluster = obs.members.find((m) => m.clusterVersion)?.clusterVersion;
    if (minor(cluster) === j.target) {
      throw new OpsError(`the cluster version is already ${cluster}: a downgrade is no longer possible`, 1, {
        code: 'rollback_refused',
        hint: `restore from the snapshots taken before each member (${j.snapshots.map((s) => s.file).join(', ') || 'none recorded'}) into a new cluster if you must go back`,
      });
    }
    const moved = startedMembers(j).filter((name) => {
      const ob = obs.members.find((m) => m.name === name);
      return !ob?.reachable || minor(ob.serverVersion) === j.target || j.steps.some((s) => s.member === name && s.kind === 'start' && s.status !== 'done');
    });
    const out: RollbackReport['members'] = [];
    for (const name of moved.reverse()) {
      const m = o.cluster.members.find((x) => x.name === name)!;
      const prev = j.previous[name];
      const p = o.reporter.begin(`${name}: back to ${prev.version}`);
      const t0 = o.now();
      await o.driver.stop(m);
      await waitFor(async () => ((await o.driver.isRunning(m)) ? undefined : true), { timeoutMs: t.stopMs, pollMs: Math.min(100, t.pollMs), what: `${name} process exit` }).catch(async (err) => {
        if (!o.driver.kill) throw err;
        await o.driver.kill(m);
      });
      await o.driver.start(m, prev);
      const c = new KvClient(m.endpoint, { timeoutMs: t.requestMs });
      await waitFor(async () => ((await c.health()).healthy ? true : undefined), { timeoutMs: t.healthyMs, pollMs: t.pollMs, what: `${name} healthy on ${prev.version}` });
      await waitFor(async () => {
        const all = await observeCluster(o.cluster.members, { timeoutMs: t.requestMs });
        return all.members.every((x) => x.healthy) ? true : undefined;
      }, { timeoutMs: t.healthyMs, pollMs: t.pollMs, what: 'cluster healthy' });
      const ms = o.now() - t0;
      p.done(`${name}: back on ${prev.version}, cluster healthy`);
      out.push({ name, from: j.target, to: prev.version, ms });
    }
    j.status = 'rolled-back';
    for (const s of j.steps) if (s.status === 'running' || s.status === 'failed') s.status = 'pending';
    await writeJournal(file, j, o.now());
    return { status: out.length ? 'rolled-back' : 'nothing-to-do', journal: file, members: out };
  } finally {
    await unlock().catch(() => undefined);
  }
}
