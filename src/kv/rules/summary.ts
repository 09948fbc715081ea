/**
 * The three lines a plan opens with (what will happen, whether anything blocks it, what to do next),
 * the rows that block a run, and the way back once a hop moved the cluster version. Pure: the ladder,
 * the one-hop executor, the downgrade, kv rollback and the report say the same.
 */
import { DOWNGRADE_FROM, DOWNGRADE_TO } from '@opsctl/shared/etcd-ladder.js';
import { PROOF_RULES } from './trial.js';
import type { CheckRow } from './types.js';

/** The rows that stop a run: a refusal, a proof that could not run, and with --strict any check that could not. */
export function blocking(rows: CheckRow[], { strict }: { strict: boolean }): CheckRow[] {
  return rows.filter((r) => r.status === 'refuse' || (r.status === 'not checked' && (strict || PROOF_RULES.has(r.rule))));
}

/** Rows named by rule, each rule's members once: "3.2 → 3.3 [config-3.3] kv1, kv2; [data-trial] kv3". */
export function namedRows(rows: CheckRow[], max = 4, { withHop }: { withHop?: boolean } = {}): string {
  const byRule = new Map<string, { hop: string; rule: string; members: string[] }>();
  for (const r of rows) {
    const key = `${r.hop}\0${r.rule}`;
    const g = byRule.get(key) ?? { hop: r.hop, rule: r.rule, members: [] };
    if (r.member && !g.members.includes(r.member)) g.members.push(r.member);
    byRule.set(key, g);
  }
  const groups = [...byRule.values()];
  const hop = withHop ?? new Set(groups.map((g) => g.hop)).size > 1;
  const words = groups.slice(0, max).map((g) => `${hop ? `${g.hop} ` : ''}[${g.rule}]${g.members.length ? ` ${g.members.join(', ')}` : ''}`);
  if (groups.length > max) words.push(`and ${groups.length - max} more`);
  return words.join('; ');
}

export interface SummaryInput {
  /** What the plan does: upgrade (a hop or a ladder), a rolling restart on one version, or etcd's downgrade. */
  kind: 'upgrade' | 'restart' | 'downgrade';
  from: string;
  to: string;
  /** The hops' targets, in order (one for a one-hop run). */
  hops: string[];
  /** The members in the order they go (the leader last), and which one leads now. */
  members: string[];
  leader?: string;
  rows: CheckRow[];
  /** The plan's own warnings (a small cluster, --no-backup, space), listed after it. */
  warnings: string[];
  strict: boolean;
  dryRun: boolean;
  resuming?: boolean;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * The plan's own warnings as they end its text: the lines `planSummary`'s "N warnings at the end of the
 * plan" promises, from the same list, so a text that says the one prints the other.
 */
export function warningLines(warnings: readonly string[]): string[] {
  return warnings.map((w) => `  ! ${w}`);
}

/** The plan's first three lines: what will happen, whether anything blocks it, and what to do next. */
export function planSummary(s: SummaryInput): string[] {
  const followers = s.members.filter((m) => m !== s.leader);
  const order = s.leader && s.members.includes(s.leader) ? [...followers, `${followers.length ? 'then ' : ''}${s.leader} (the leader)`] : s.members;
  const who = `the ${s.members.length === 1 ? 'member' : `${s.members.length} members one at a time`}: ${order.join(', ')}`;
  const what =
    s.kind === 'restart'
      ? `Rolling restart on ${s.to}, restarting ${who}`
      : s.kind === 'downgrade'
        ? `Downgrade ${s.from} → ${s.to} with etcd's downgrade API, restarting ${who}`
        : s.hops.length > 1
          ? `Upgrade ${s.from} → ${s.to} in ${s.hops.length} hops (${s.hops.join(', ')}), each restarting ${who}`
          : `Upgrade ${s.from} → ${s.to}, restarting ${who}`;
  const stop = blocking(s.rows, { strict: s.strict });
  const count = (status: CheckRow['status']) => s.rows.filter((r) => r.status === status);
  const warn = count('warn');
  const unchecked = count('not checked').filter((r) => !stop.includes(r));
  const ladder = s.hops.length > 1;
  const heed = [
    ...(warn.length ? [`${warn.length} warn (${namedRows(warn, 3, { withHop: ladder })})`] : []),
    ...(unchecked.length ? [`${unchecked.length} not checked (${namedRows(unchecked, 3, { withHop: ladder })})`] : []),
    ...(s.warnings.length ? [`${plural(s.warnings.length, 'warning')} at the end of the plan`] : []),
  ];
  const blocks = stop.length
    ? `Blocked by ${plural(stop.length, 'finding')}: ${namedRows(stop, 4, { withHop: ladder })} (each below, with its fix)`
    : `Nothing blocks it: ${count('ok').length} of ${plural(s.rows.length, 'finding')} ok${heed.length ? `; to heed: ${heed.join(', ')}` : ''}`;
  const verb = s.kind === 'downgrade' ? 'downgrade' : 'upgrade';
  const unproven = stop.filter((r) => PROOF_RULES.has(r.rule) && r.status === 'not checked' && r.member).map((r) => r.member!);
  const ways = [
    ...(stop.some((r) => !PROOF_RULES.has(r.rule)) ? ['a refusal judged wrong: --ignore-check RULE'] : []),
    ...(unproven.length ? [`a member to stop unproven: --skip-trial ${[...new Set(unproven)].join(',')} --skip-reason "WHY"`] : []),
  ];
  const next = stop.length
    ? `Next: fix what each blocking finding names, then run the same command${ways.length ? ` (${ways.join('; ')})` : ''}; nothing was changed`
    : s.dryRun
      ? `Next: run the same command without --dry-run: it asks before the first stop (--yes: no question)${s.resuming ? `, and resumes the ${verb}` : ''}`
      : `Next: on a yes (asked below, or --yes) ${s.kind === 'downgrade' ? "etcd's downgrade is enabled and " : ''}the first member stops; Ctrl-C stops at a safe point, and the same command resumes`;
  return [`${s.resuming ? 'Resuming: ' : ''}${what}`, blocks, next];
}

/*
 * The ways back once a hop moved the cluster version, said the same wherever a text names them (the
 * cluster-version step, so the terminal and the report; kv rollback's refusal): restarting members on
 * the old binary (kv rollback) is over, but etcd's downgrade API takes a 3.6 cluster back to 3.5 and a
 * 3.7 one to 3.6 (kv downgrade), and every hop's restore point rebuilds the cluster on the minor it left.
 */

/** Whether `opsctl kv downgrade --to FROM` takes a cluster on `to` back to `from` (one minor, a row with a downgrade guide). */
export function downgradesBack(from: string, to: string): boolean {
  const i = DOWNGRADE_FROM.indexOf(to);
  return i >= 0 && DOWNGRADE_TO[i] === from;
}

/** The way back from `to` to `from` after the cluster version moved: the downgrade where etcd has one, and the hop's restore point. */
export function wayBack(from: string, to: string): string {
  const restore = `the hop's restore point (opsctl kv restore --from-hop ${from}; writes after it are lost)`;
  return downgradesBack(from, to)
    ? `the way back: opsctl kv downgrade --to ${from} (etcd's downgrade API, member by member, no write lost), or ${restore}`
    : `the way back: ${restore}`;
}

/** The cluster-version step's words once the version moved: what is over (a restart on the old binary) and what is not. */
export function versionMoved(from: string, to: string): string {
  return `updated from ${from}: members no longer go back by a restart on ${from} (kv rollback); ${wayBack(from, to)}`;
}

/** A row's fix, as `; fix: …` (none when the finding already names its own: the rule's general one would repeat it). */
export function fixOf(r: Pick<CheckRow, 'detail' | 'fix'>): string {
  return r.fix && !/\bfix:/.test(r.detail) ? `; fix: ${r.fix}` : '';
}
