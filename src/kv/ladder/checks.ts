/** Each hop's rulebook judged before the first stop, and the refusal that names every reason (trials.ts: the trial starts beside it; fixes.ts: the v2 fix it may plan). */
import { UpgradeRefused } from '../upgrade/options.js';
import { hopName, type Hop } from './plan.js';
import { checkHop } from '../rules/index.js';
import { PROOF_RULES } from '../rules/trial.js';
import { fixOf } from '../rules/summary.js';
import type { CheckRow, HopFacts } from '../rules/types.js';
import type { TrialFinding } from '../trial/run.js';
import { hopFacts, readsOf, type DataReads, type HopAt, type HopReads } from './facts.js';
import { type LadderOptions, type Overrides } from './record.js';
import type { Snapshotting } from '../upgrade/options.js';
import { isResumable, journalPath, memberMayBeDown } from '../journal/journal.js';
import { readJournal } from '../journal/read.js';
import type { JournalWithRuns } from '../journal/runs.js';

/**
 * The member the recorded run stopped and did not start again (the journal is the truth on resume: a
 * member down is the one it stopped), with the hop it was in and the checks recorded before that stop.
 */
export function stoppedByJournal(o: Pick<LadderOptions, 'dataDir' | 'cluster'>): { member: string; hop: string; recorded: CheckRow[] } | undefined {
  let j;
  try {
    j = readJournal(journalPath(o.dataDir, o.cluster.key));
  } catch {
    return undefined; // (the executor names a journal it cannot use)
  }
  if (!isResumable(j)) return undefined;
  const member = memberMayBeDown(j);
  if (!member) return undefined;
  // (named as the trials' hops are: the patch mark kept)
  const hop = hopName({ from: j.source, to: j.target, patch: Boolean(j.allowSameVersion && j.source === j.target) });
  return { member, hop, recorded: (j as JournalWithRuns).checks ?? [] };
}

/** A hop's rules over its facts, with the refusals of the rules named by --ignore-check, and the members --skip-trial names, shown as warnings. */
export async function check(o: Pick<LadderOptions, Overrides>, facts: HopFacts): Promise<CheckRow[]> {
  const rows = await checkHop(facts);
  const ignore = new Set(o.ignoreChecks ?? []);
  const skip = new Set(o.skipTrial?.members ?? []);
  return rows.map((r): CheckRow => {
    if (PROOF_RULES.has(r.rule) && r.member && skip.has(r.member) && (r.status === 'refuse' || r.status === 'not checked')) {
      const { fix: _fix, ...rest } = r;
      return { ...rest, status: 'warn', detail: `not proven, skipped by --skip-trial ${r.member} (${o.skipTrial!.reason}): ${r.detail}` };
    }
    return ignore.has(r.rule) && r.status === 'refuse' ? { ...r, status: 'warn', detail: `ignored (--ignore-check ${r.rule}): ${r.detail}` } : r;
  });
}

/** Every hop's checks, with the v2 store measured for the 3.4 and 3.5 rules. */
export async function checkAll(
  o: Pick<LadderOptions, 'cluster' | 'driver' | Overrides | Snapshotting> & Partial<Pick<LadderOptions, 'inClone' | 'judged'>>,
  hops: Hop[],
  {
    obs,
    bins,
    v2,
    fromHop,
    trials,
    tell,
    early = [],
  }: Pick<HopAt, 'obs' | 'bins' | 'v2'> & {
    fromHop: number;
    trials: Map<string, TrialFinding[]>;
    tell?: (reads: Array<[string, DataReads]>) => void;
    /** Each hop's reads begun before the trials (facts.ts readsBeforeTrials), by index. */
    early?: ReadonlyArray<Promise<HopReads> | undefined>;
  },
) {
  // A patch hop inside a hop's source minor (3.5.x → 3.5.32+ before 3.6, 3.6.x → 3.6.11+ before 3.7) is planned first.
  const patchPlanned = (h: Hop) => !h.patch && hops.some((x) => x.patch && x.from === h.from);
  // Every hop at once (each only looks: config reads, etcdutl on the data dirs).
  const facts = await Promise.all(
    hops.map(async (h, i) =>
      i < fromHop
        ? undefined
        : hopFacts(o, h, {
            ...(early[i] ? { reads: await early[i] } : {}),
            obs,
            bins,
            v2,
            current: i === fromHop,
            patchPlanned: patchPlanned(h),
            trials,
            judgedBeforeCopy: Boolean(o.inClone) && i === fromHop,
            ...(o.judged ? { judged: o.judged } : {}),
          }),
    ),
  );
  // (what this run read of the members' data for its plan, told to the rehearsal's clone: it reads its copy no more)
  tell?.(facts.flatMap((f, i) => (f ? [[hopName(hops[i]!), readsOf(f)] as [string, DataReads]] : [])));
  return Promise.all(facts.map((f) => (f ? check(o, f) : Promise.resolve([]))));
}

/** The rows that stop the ladder: refusals, a member not proven (the trials), and with --strict every check that could not run. */
export { blocking } from '../rules/summary.js';

export function reasonOf(r: CheckRow): string {
  const what =
    r.status !== 'not checked' ? `${r.detail}${fixOf(r)}` : PROOF_RULES.has(r.rule) ? `not proven: ${r.detail}` : `not checked (--strict): ${r.detail}`;
  return `${r.hop} [${r.rule}]${r.member ? ` member ${r.member}` : ''}: ${what} (${r.guide})`;
}

/**
 * Refuses with every blocking row, naming --strict's part, or --skip-trial's, when that is what refuses.
 * `shown`: the plan above it has just printed each row with its fix, so the message names each rule once
 * with its members (--json's `reasons` keep every row whole).
 */
export function refuseRows(rows: CheckRow[], { stopped, shown = false }: { stopped: boolean; shown?: boolean }): never {
  const unproven = [...new Set(rows.filter((r) => r.status === 'not checked' && PROOF_RULES.has(r.rule) && r.member).map((r) => r.member!))];
  const strictOnly = rows.some((r) => r.status === 'not checked' && !PROOF_RULES.has(r.rule));
  const ways = [
    ...(unproven.length
      ? [
          `a member is stopped only once its trials have run: give what each line names; to accept the risk for a member by name: --skip-trial ${unproven.join(',')} --skip-reason "WHY" (kept in the journal and the report)`,
        ]
      : []),
    ...(strictOnly ? ['or drop --strict to go ahead with the other checks that cannot run listed as such'] : []),
  ];
  const hint = stopped
    ? `nothing of this hop was stopped: fix what the checks name, then run the same command to resume the ladder${ways.length ? `; ${ways.join('; ')}` : ''}`
    : `nothing was stopped or changed: fix what the checks name, then run the same command${ways.length ? `; ${ways.join('; ')}` : ''} (a refusal you have judged wrong: --ignore-check RULE, the id in brackets)`;
  throw new UpgradeRefused(rows.map(reasonOf), hint, 'upgrade', shown ? namedOnce(rows) : undefined);
}

/** One line per hop, rule and verdict with the members it blocks, for a refusal whose rows the plan above showed. */
function namedOnce(rows: CheckRow[]): string[] {
  const by = new Map<string, string[]>();
  for (const r of rows) {
    const why = r.status !== 'not checked' ? 'refused' : PROOF_RULES.has(r.rule) ? 'not proven' : 'not checked (--strict)';
    const key = `${r.hop} [${r.rule}]\0${why}`;
    const members = by.get(key) ?? [];
    if (r.member && !members.includes(r.member)) members.push(r.member);
    by.set(key, members);
  }
  return [...by].map(([key, members]) => {
    const [rule, why] = key.split('\0');
    return `${rule}${members.length ? ` ${members.join(', ')}` : ''}: ${why} (each above, with its fix)`;
  });
}

export function strOf(v: string | { why: string } | undefined): string | undefined {
  return typeof v === 'string' ? v : undefined;
}
