import type { Context } from '../../../context.js';
import { OpsError } from '../../../core/errors.js';
import type { MemberSpec } from '../../../kv/cluster/cluster-file.js';
import type { PrunePlan } from '../../../kv/backups/backups.js';
import type { KeptContainer, PruneVerdict } from '../../../kv/containers/prune.js';

/** The kept containers of a cluster file's container driver that `kv backups prune` removes (kv/containers/prune.ts), and how. */
export interface KeptPrune {
  /** The cluster file's cluster key. */
  cluster: string;
  verdict: PruneVerdict;
  /** Removes them, under the cluster's journal lock; what became of each. */
  remove(notice: (text: string) => void): Promise<Array<{ member: string; name: string; removed: boolean; detail: string }>>;
}

/**
 * With `--cluster FILE` of a container driver: the kept containers of the runs the prune removes (never one of a
 * run it keeps), read from the engine. Undefined for another driver (its members keep no containers).
 */
export async function keptPrune(ctx: Context, file: string, plan: PrunePlan): Promise<KeptPrune | undefined> {
  const [{ findCluster }, { clusterKey, journalPath, lockJournal }] = await Promise.all([import('./target.js'), import('../../../kv/journal/journal.js')]);
  const found = await findCluster(ctx, { cluster: file });
  if (found.source !== 'file') return undefined;
  const { parsed } = found;
  const { fileDriver } = await import('./file-driver.js');
  const kept = (await fileDriver(ctx, parsed.driver))?.keptByHops;
  if (!kept) return undefined;
  const { keptToPrune } = await import('../../../kv/containers/prune.js');
  const cluster = clusterKey(parsed.members.map((m) => m.endpoint));
  const ids = (runs: PrunePlan['keep']) => runs.filter((r) => r.cluster === cluster).map((r) => r.run);
  // (a run past --keep that is in progress blocks the prune before this: counted as kept here all the same)
  const verdict = keptToPrune(await kept.list(parsed.members), { keep: [...ids(plan.keep), ...ids(plan.blocked)], remove: ids(plan.remove) });
  const memberOf = (k: KeptContainer): MemberSpec => parsed.members.find((m) => m.name === k.member)!;
  return {
    cluster,
    verdict,
    async remove(notice) {
      if (!verdict.remove.length) return [];
      let unlock: () => Promise<void>;
      try {
        unlock = await lockJournal(journalPath(ctx.paths.data, cluster), 4000, notice);
      } catch (err) {
        if (err instanceof OpsError && err.code === 'locked')
          throw new OpsError(`not removing the kept containers: the journal of cluster ${cluster} is locked (an upgrade, rollback or restore runs now)`, 1, {
            code: 'locked',
            hint: 'wait for it to finish, then prune again',
          });
        throw err;
      }
      const out: Array<{ member: string; name: string; removed: boolean; detail: string }> = [];
      try {
        for (const k of verdict.remove) {
          try {
            out.push({ member: k.member, name: k.name, removed: true, detail: await kept.remove(memberOf(k), k.name) });
          } catch (err) {
            out.push({ member: k.member, name: k.name, removed: false, detail: (err as Error).message });
          }
        }
      } finally {
        await unlock();
      }
      return out;
    },
  };
}

/** How a kept container is named in the prune's list. */
export function keptLine(k: KeptContainer & { run?: string }): string {
  return `kept container ${k.name} (${k.member}, ${k.image}; ${k.run ? `kept by run ${k.run}` : 'kept before every run listed'})`;
}
