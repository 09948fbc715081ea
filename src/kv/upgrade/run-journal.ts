import { hostname } from 'node:os';
import type { MemberDriver } from '../drivers/driver.js';
import { newJournal, type Journal } from '../journal/journal.js';
import { minor } from '../cluster/parse.js';
import { beginRun, type JournalWithRuns } from '../journal/runs.js';
import type { Destination, Kept, UpgradeOptions, WayBack } from './options.js';
import type { Preflight } from './preflight.js';

/**
 * The journal of this run: a new one (each member's version and binaries before it is touched), or the
 * resumed one, owned by this process now; either way with this run begun in it. Not yet written.
 */
export function runJournal(
  o: Pick<UpgradeOptions, 'cluster' | Destination | WayBack | Kept | 'now' | 'debug'>,
  driver: MemberDriver,
  pre: Preflight,
  resumed: Journal | undefined,
): Journal {
  let j: Journal;
  if (!resumed) {
    const previous: Journal['previous'] = {};
    for (const m of o.cluster.members) {
      const cur = driver.current(m);
      const ob = pre.obs.members.find((x) => x.name === m.name);
      previous[m.name] = { version: minor(ob?.serverVersion) ?? cur?.version ?? pre.plan.source, binDir: cur?.binDir };
    }
    j = newJournal(o.cluster.key, pre.plan, previous, { allowSameVersion: o.allowSameVersion, targetBin: o.targetBin, now: o.now() });
    if (o.downgrade) j.downgrade = true;
  } else {
    j = resumed;
    j.status = 'running';
    j.owner = { pid: process.pid, host: hostname() };
    delete j.halt;
  }
  // (the part of the run the crash-point lines that follow belong to: kv/drivers/traced.ts)
  o.debug?.(`[kv] point-context: ${j.source}→${j.target}${j.downgrade ? '-down' : j.allowSameVersion ? '-restart' : ''}`);
  beginRun(j, new Date(o.now()).toISOString());
  (j as JournalWithRuns).commands = { rollback: o.rollbackCommand };
  if (o.checks) (j as JournalWithRuns).checks = o.checks;
  if (o.proofs) (j as JournalWithRuns).proofs = o.proofs;
  if (o.v2Measured && !j.v2) j.v2 = o.v2Measured;
  return j;
}
