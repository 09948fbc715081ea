import { checkConfig } from './config-check.js';
import { trialRule } from './trial.js';
import type { Rule } from './types.js';

const GUIDE = 'https://etcd.io/docs/v3.3/upgrades/upgrade_3_3/';

/** 3.2 → 3.3: the seed's interface changes, read from each member's config file (config-check.ts); its data and auth traps. */
export const HOP_33: Rule[] = [
  trialRule(GUIDE),
  {
    id: 'auth-3.2.31',
    check:
      'with auth on, no member runs 3.2 before 3.2.31 (it can send an unauthorized lease revoke to a 3.3 member during the upgrade, which can corrupt data)',
    where: ["the member's API"],
    severity: 'refuse',
    fix: 'upgrade every member to 3.2.31 or later first (a rolling restart onto the newer 3.2 patch: opsctl kv upgrade --to 3.2 --allow-same-version --target-bin DIR)',
    guide: 'https://github.com/etcd-io/etcd/blob/main/CHANGELOG/CHANGELOG-3.2.md',
    test: (f) => {
      if (!f.current) return [{ result: 'ok' as const, detail: 'the members run the hop source only later: checked then' }];
      if (f.auth === undefined || typeof f.auth === 'object')
        return [{ result: 'not-checked' as const, detail: f.auth ? f.auth.why : 'whether auth is on was not asked' }];
      return f.members.map((m) => {
        const patch = /^3\.2\.(\d+)/.exec(m.serverVersion ?? '')?.[1];
        if (f.auth && patch !== undefined && Number(patch) < 31)
          return {
            member: m.name,
            result: 'problem' as const,
            detail: `runs ${m.serverVersion} and auth is enabled: a 3.2 member before 3.2.31 can send an unauthorized lease revoke to a 3.3 member during the upgrade, which can corrupt data`,
          };
        return { member: m.name, result: 'ok' as const, detail: `${m.serverVersion ?? 'version unknown'}, auth ${f.auth ? 'on' : 'off'}` };
      });
    },
  },
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
            ? { member: m.name, result: 'problem' as const, detail: problems.map((p) => `${atLine(p.file, p.line)}: ${p.problem}; fix: ${p.fix}`).join('; ') }
            : { member: m.name, result: 'ok' as const, detail: `${m.config.file}: nothing 3.3 would refuse` };
        }),
      );
    },
  },
];

/** FILE:LINE, the host after it ("/etc/etcd.yaml:25 on 10.0.0.5"): a config read on the member's host is labelled "FILE on HOST". */
function atLine(file: string, line: number): string {
  const on = / on (\S+)$/.exec(file);
  return on ? `${file.slice(0, on.index)}:${line} on ${on[1]}` : `${file}:${line}`;
}
