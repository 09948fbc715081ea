/**
 * The ladder's run: hop after hop, each one's executor (runUpgrade through the ports), its rules again before
 * its first stop (the plan checked the first), its fix steps, its cluster version confirmed before the next, and
 * the ladder file kept current (ladder.ts plans and proves the ladder, then climbs it here).
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { UpgradeRefused, type UpgradeReport } from '../upgrade/options.js';
import { journalPath, writeRecord } from '../journal/journal.js';
import { readJournal } from '../journal/read.js';
import { restorePointOf } from '../upgrade/restore-point.js';
import { hopName } from './plan.js';
import { hopRows } from '../rules/index.js';
import { minor } from '../cluster/parse.js';
import type { CheckRow, HopFacts } from '../rules/types.js';
import type { ClusterObservation } from '../cluster/types.js';
import type { TrialFinding } from '../trial/run.js';
import { hopFacts, look, type Binaries } from './facts.js';
import { proofsOf } from './proofs.js';
import type { Climbing, HopPorts } from './single-hop.js';
import { type LadderFile, type LadderOptions, type LadderReport, ladderDir } from './record.js';
import { blocking, check, reasonOf, refuseRows } from './checks.js';
import { type Ahead, readAhead, trialsOf } from './trials.js';
import { fixesBefore, planFix } from './fixes.js';

/** What the climb starts from: the ladder file (recorded: resumed), the report so far, what the checks found. */
export interface ClimbFrom {
  file: string;
  report: LadderReport;
  recorded: LadderFile | undefined;
  bins: Record<string, Binaries>;
  v2: HopFacts['v2'];
  trials: Map<string, TrialFinding[]>;
  ahead: Ahead;
}

/** Hop after hop, each one's executor run, the cluster version confirmed, the ladder file kept current. */
export async function climb(o: Pick<LadderOptions, Climbing>, ports: HopPorts, at: ClimbFrom): Promise<LadderReport> {
  const { file, report, recorded, bins, v2, trials, ahead } = at;
  const now = () => new Date(o.now()).toISOString();
  const lf: LadderFile = recorded ?? {
    version: 1,
    id: `${now().replace(/[-:]/g, '').slice(0, 15)}-${randomBytes(3).toString('hex')}`,
    cluster: o.cluster.key,
    from: report.from,
    to: o.to,
    status: 'running',
    current: 0,
    hops: report.hops.map((h) => ({ from: h.from, to: h.to, patch: h.patch, status: 'pending', binDir: h.binDir, binaryVersion: h.binaryVersion })),
    ...(v2 && 'bytes' in v2 ? { v2 } : {}),
    createdAt: now(),
    updatedAt: now(),
  };
  lf.status = 'running';
  lf.owner = { pid: process.pid, host: hostname() };
  delete lf.halt;
  // The ladder file is a journal too: the same atomic, synced write, once per change of hop (a hop
  // done and the next one running are one write; the run's start and its first hop too).
  const save = () => writeRecord(file, lf, o.now(), { trace: o.debug });
  /** Halts the ladder before `hop` changes anything, journalled, when a check of `rows` blocks it. */
  const haltOn = async (hop: (typeof lf.hops)[number], rows: CheckRow[]): Promise<void> => {
    const stop = blocking(rows, { strict: o.strict });
    if (!stop.length) return;
    hop.status = 'pending';
    lf.status = 'halted';
    lf.halt = { hop: hopName(hop), reason: stop.map(reasonOf).join('; ') };
    await save();
    refuseRows(stop, { stopped: true });
  };
  const start = lf.current;
  if (lf.hops[start]) lf.hops[start].status = 'running';
  await save();
  const journal = journalPath(o.dataDir, o.cluster.key);
  /** The look that confirmed the previous hop's cluster version (taken a moment ago): the next hop's rules read it. */
  let confirmed: ClusterObservation | undefined;
  for (let i = start; i < lf.hops.length; i++) {
    const hop = lf.hops[i]!;
    const following = lf.hops[i + 1];
    // (the part of the run the crash-point lines that follow belong to, as the hop's executor says it: kv/drivers/traced.ts)
    o.debug?.(`[kv] point-context: ${hop.from}→${hop.to}${hop.patch ? '-restart' : ''}`);
    let proven = trials;
    if (i > start) {
      // Before this hop's first stop: its rules on the cluster as it is now (the first hop of this
      // run was checked on the plan a moment ago; the look after the previous hop is as fresh).
      const obs = confirmed ?? (await look(o));
      // Each member's settings read again (begun while the hop before waited for its cluster version): a
      // trial runs again only where they changed since the plan.
      const again = await (ahead.trials ?? trialsOf(o, [hop], bins, trials, { seen: obs }));
      // (its data read during that wait too; a read that failed there is made now)
      const reads = await ahead.reads?.catch(() => undefined);
      delete ahead.trials;
      delete ahead.reads;
      proven = new Map([...trials, ...again]);
      const patchLater = lf.hops.some((h, k) => k > i && h.patch);
      const facts = await hopFacts(o, hop, { obs, bins, v2, current: true, patchPlanned: patchLater, trials: again, reads });
      const rows = planFix(o, await check(o, facts));
      report.checks = [...report.checks.filter((r) => r.hop !== hopRows(hop)), ...rows];
      await haltOn(hop, rows);
    }
    if (fixesBefore(hop)) {
      // --fix-v2store (or the fix a killed run left unfinished) before the hop's first stop, then its checks again
      const name = hopRows(hop);
      let again: CheckRow[] | undefined;
      try {
        again = await ports.fix(
          hop,
          report.checks.filter((c) => c.hop === name),
          bins,
          v2,
          trials,
        );
      } catch (err) {
        hop.status = 'pending';
        lf.status = err instanceof UpgradeRefused ? 'halted' : 'interrupted';
        await save();
        throw err;
      }
      if (again) {
        report.checks = [...report.checks.filter((c) => c.hop !== name), ...again];
        await haltOn(hop, again);
      }
    }
    let r: UpgradeReport;
    try {
      const checks = report.checks.filter((c) => c.hop === hopRows(hop));
      r = await ports.run({
        to: hop.to,
        allowSameVersion: hop.patch,
        targetBin: hop.binDir,
        confirm: undefined,
        checks,
        proofs: proofsOf(proven, lf.hops.slice(i), bins),
        v2Measured: lf.v2 ?? (v2 && 'bytes' in v2 ? v2 : undefined),
        atClusterVersionWait: () => {
          if (following) Object.assign(ahead, readAhead(o, following, bins, trials));
          return undefined;
        },
      });
    } catch (err) {
      lf.status = 'interrupted';
      await save();
      throw err;
    }
    report.hops[i] = {
      ...report.hops[i]!,
      report: r,
      status: r.status === 'halted' ? 'halted' : r.status === 'done' || r.status === 'nothing-to-do' ? 'done' : 'running',
    };
    if (r.status === 'halted') {
      hop.status = 'halted';
      lf.status = 'halted';
      lf.halt = { hop: hopName(hop), reason: r.halt?.reason ?? 'halted', rollback: r.halt?.rollback };
      await save();
      return { ...report, status: 'halted', ladderFile: file, halt: lf.halt };
    }
    // The cluster version at the hop's target on every member before the next hop.
    const after = await look(o);
    confirmed = after;
    const off = after.members.filter((m) => minor(m.clusterVersion) !== hop.to || minor(m.serverVersion) !== hop.to);
    if (off.length) {
      lf.status = 'halted';
      lf.halt = {
        hop: hopName(hop),
        reason: `after the hop, ${off.map((m) => `${m.name} reports server ${m.serverVersion ?? '?'}, cluster ${m.clusterVersion ?? '?'}`).join('; ')}: not at ${hop.to}`,
      };
      await save();
      return { ...report, status: 'halted', ladderFile: file, halt: lf.halt };
    }
    if (existsSync(journal)) {
      const kept = join(ladderDir(o.dataDir, o.cluster.key), `hop-${i + 1}-${hop.from}-${hop.to}.json`);
      const j = readJournal(journal);
      if (j && j.target === hop.to) {
        copyFileSync(journal, kept);
        hop.journal = kept;
        const rp = restorePointOf(j);
        if (rp) hop.restorePoint = rp;
        report.hops[i]!.journal = kept;
      }
    }
    hop.status = 'done';
    lf.current = i + 1;
    const next = lf.hops[i + 1];
    if (next) next.status = 'running';
    else lf.status = 'done';
    await save();
  }
  if (lf.status !== 'done') {
    lf.status = 'done';
    await save();
  }
  return { ...report, status: 'done', ladderFile: file };
}
