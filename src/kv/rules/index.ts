import { v3DatabaseRule } from './v3-database.js';
import { HOP_33 } from './hop-3.3.js';
import { HOP_34 } from './hop-3.4.js';
import { HOP_35 } from './hop-3.5.js';
import { HOP_36 } from './hop-3.6.js';
import { HOP_37 } from './hop-3.7.js';
import { dataTrialRule, trialRule } from './trial.js';
import type { CheckRow, HopFacts, Rule } from './types.js';

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

/** Every rule of a hop run over its facts: one row per finding, none left out. */
export async function checkHop(facts: HopFacts, rules = rulesFor(facts.from, facts.to)): Promise<CheckRow[]> {
  const hop = `${facts.from} → ${facts.to}`;
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

/** The rows as the plan shows them: every check of the hop with its result. */
export function renderChecks(rows: CheckRow[], indent = '    '): string[] {
  const out: string[] = [];
  const byRule = new Map<string, CheckRow[]>();
  for (const r of rows) byRule.set(r.rule, [...(byRule.get(r.rule) ?? []), r]);
  for (const [id, list] of byRule) {
    const first = list[0]!;
    out.push(`${indent}[${id}] ${first.check} (${first.where}; ${first.guide})`);
    for (const r of list) {
      const mark = r.status === 'not checked' ? `not checked: ${r.detail}` : `${r.status}: ${r.detail}`;
      out.push(`${indent}    ${r.member ? `${r.member}: ` : ''}${mark}${r.fix ? `; fix: ${r.fix}` : ''}`);
    }
  }
  return out;
}
