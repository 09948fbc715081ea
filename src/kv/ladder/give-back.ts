/**
 * The upgrade's resume gives back what it took before it refuses anything else (issue 57): a cluster worse than
 * the journal expects (a member down that the journal never stopped) gets the member the journal stopped started
 * on its own version first (upgrade/give-back.ts), then the run halts saying what remains for the operator, as
 * `kv rollback` says it.
 */
import { OpsError } from '../../core/errors.js';
import type { ClusterObservation } from '../cluster/types.js';
import { writeJournal, type Journal } from '../journal/journal.js';
import { giveBackInFlight } from '../upgrade/give-back.js';
import { acquireLock } from '../upgrade/lock.js';
import type { Look, UpgradeOptions } from '../upgrade/options.js';

export async function giveBackFirst(
  o: Pick<UpgradeOptions, Look | 'driver' | 'dryRun' | 'reporter' | 'now' | 'lockStaleMs'> & { rollbackCommand?: string },
  file: string,
  j: Journal,
  obs: ClusterObservation,
): Promise<void> {
  if (!o.driver) return;
  const unlock = o.dryRun ? () => Promise.resolve() : await acquireLock(file, o);
  let r: Awaited<ReturnType<typeof giveBackInFlight>>;
  try {
    const save = () => writeJournal(file, j, o.now(), true, o.debug);
    r = await giveBackInFlight({ o, driver: o.driver, journal: j, real: false, membership: [], checkpoint: save }, obs, save, { dryRun: o.dryRun });
  } finally {
    await unlock();
  }
  if (!r) return;
  const names = r.left.map((x) => x.name).join(', ');
  const given = Boolean(r.gave && !o.dryRun);
  throw new OpsError(
    `upgrade ${given ? 'halted' : 'refused'}: ${r.left.length === 1 ? 'a member' : 'members'} the journal never stopped ${r.left.length === 1 ? 'is' : 'are'} down (${names})${r.gave ? `; ${r.gave}` : ''}:\n  - ${r.lines.join('\n  - ')}`,
    given ? 3 : 1,
    {
      code: 'given_back',
      hint: `bring ${names} back on ${r.left.length === 1 ? 'its host' : 'their hosts'}, then run the same command to resume the upgrade${o.rollbackCommand ? ` (or undo it: ${o.rollbackCommand})` : ''}${given ? '' : '; nothing was stopped or changed by this run'}`,
    },
  );
}
