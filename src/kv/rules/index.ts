import { v3DatabaseRule } from './v3-database.js';
import { HOP_33 } from './hop-3.3.js';
import { HOP_34 } from './hop-3.4.js';
import { HOP_35 } from './hop-3.5.js';
import { HOP_36 } from './hop-3.6.js';
import { HOP_37 } from './hop-3.7.js';
import { dataTrialRule, trialRule } from './trial.js';
import type { CheckRow, HopFacts, Rule } from './types.js';
import { fixOf } from './summary.js';

/** One table per hop, by the hop's target minor: a new minor is a new table. */
export const RULEBOOK: Readonly<Record<string, Rule[]>> = { '3.3': HOP_33, '3.4': HOP_34, '3.5': HOP_35, '3.6': HOP_36, '3.7': HOP_37 };

/** The rules of the hop into `to`; a patch hop (or an unknown minor) has the binary's trial only. */
export function rulesFor(from: string, to: string): Rule[] {
  const guide = `https://etcd.io/docs/v${to}/upgrades/`;
  // (every hop's proof: its binary with each member's settings (in its table), and on a copy of each member's data)
  return [...(from === to || !RULEBOOK[to] ? [trialRule(guide)] : RULEBOOK[to]), v3DatabaseRule(guide), dataTrialRule(guide)];
}

/** Every rule's id, each once (what --ignore-check takes). */
export function ruleIds(): string[] {
  return [...new Set([trialRule('').id, v3DatabaseRule('').id, dataTrialRule('').id, ...Object.values(RULEBOOK).flatMap((rules) => rules.map((r) => r.id))])];
}

/**
 * The hop as its check rows name it (CheckRow.hop, checkHop's) and a journal's source → target:
 * the minors alone, a patch hop's mark aside. Rows of a hop are found by it, never by a name spelled again.
 */
export function hopRows(h: { from: string; to: string }): string {
  return `${h.from} → ${h.to}`;
}

/** Every rule of a hop run over its facts: one row per finding, none left out. */
export async function checkHop(facts: HopFacts, rules = rulesFor(facts.from, facts.to)): Promise<CheckRow[]> {
  const hop = hopRows(facts);
  const rows: CheckRow[] = [];
  for (const r of rules) {
    let findings;
    try {
      findings = await r.test(facts);
    } catch (err) {
      findings = [{ result: 'not-checked' as const, detail: `the check failed to run: ${(err as Error).message}` }];
    }
    for (const f of findings) {
      const status: CheckRow['status'] =
        f.result === 'problem' ? r.severity : f.result === 'not-checked' ? 'not checked' : f.result === 'later' ? 'before the hop' : 'ok';
      rows.push({
        hop,
        rule: r.id,
        check: r.check,
        where: r.where.join(', '),
        member: f.member,
        status,
        detail: f.detail,
        ...(f.result === 'problem' ? { fix: r.fix } : {}),
        guide: r.guide,
      });
    }
  }
  return rows;
}

/**
 * The rows as the plan shows them, each finding once: a rule every member passed is one line (the
 * members, and the finding when they share it, else what was checked); a rule with anything else
 * keeps its description and guide, and members with the same result and words share a line. The
 * rows themselves (--json, the report) keep every member's words.
 */
export function renderChecks(rows: CheckRow[], indent = '    '): string[] {
  const out: string[] = [];
  const byRule = new Map<string, CheckRow[]>();
  for (const r of rows) byRule.set(r.rule, [...(byRule.get(r.rule) ?? []), r]);
  for (const [id, list] of byRule) {
    const first = list[0]!;
    if (list.every((r) => r.status === 'ok')) {
      const members = list.filter((r) => r.member).map((r) => r.member!);
      const on = members.length ? ` on ${members.join(', ')}` : '';
      const shared = list.every((r) => r.detail === first.detail);
      // a check that does not apply passed without running: said so, not as what it checks
      const moot = list.every((r) => /^does not apply\b/.test(r.detail));
      if (moot) out.push(`${indent}[${id}] ${shared ? first.detail : 'does not apply'}${on}`);
      else out.push(`${indent}[${id}] ok${on}: ${shared ? first.detail : first.check}`);
      continue;
    }
    out.push(`${indent}[${id}] ${first.check} (${first.where}; ${first.guide})`);
    const alike = new Map<string, { rows: CheckRow[] }>();
    for (const r of list) {
      const key = `${r.status}\0${r.detail}\0${r.fix ?? ''}`;
      const g = alike.get(key) ?? { rows: [] };
      g.rows.push(r);
      alike.set(key, g);
    }
    for (const { rows: same } of alike.values()) {
      const r = same[0]!;
      const members = same.filter((x) => x.member).map((x) => x.member!);
      out.push(`${indent}    ${members.length ? `${members.join(', ')}: ` : ''}${r.status}: ${r.detail}${fixOf(r)}`);
    }
  }
  return out;
}
