import { checkConfig } from './config-check.js';
import { trialRule } from './trial.js';
import type { Rule } from './types.js';

const GUIDE = 'https://etcd.io/docs/v3.3/upgrades/upgrade_3_3/';

/** 3.2 → 3.3: the seed's interface changes, read from each member's config file (config-check.ts). */
export const HOP_33: Rule[] = [
  trialRule(GUIDE),
  {
    id: 'config-3.3',
    check:
      'auto-compaction-retention is a string (hours or a duration), auto-compaction-mode periodic|revision, max-request-bytes an integer the 3.3 clients can send',
    where: ['config file'],
    severity: 'refuse',
    fix: 'write the values as 3.3 reads them (the finding names the line and the value to write)',
    guide: GUIDE,
    async test(f) {
      return Promise.all(
        f.members.map(async (m) => {
          if (!m.config)
            return { member: m.name, result: 'not-checked' as const, detail: 'no config file known for this member (flags are not checked by this rule)' };
          const problems = await checkConfig(m.config.text, m.config.file, m.name);
          return problems.length
            ? { member: m.name, result: 'problem' as const, detail: problems.map((p) => `${p.file}:${p.line}: ${p.problem}; fix: ${p.fix}`).join('; ') }
            : { member: m.name, result: 'ok' as const, detail: `${m.config.file}: nothing 3.3 would refuse` };
        }),
      );
    },
  },
];
