import { describe, expect, it } from 'vitest';
import { expandHome, expandHomeFlags } from '../../src/commands/lib/home-path.js';
import { renderChecks } from '../../src/kv/rules/index.js';
import { downgradesBack, planSummary, versionMoved, warningLines } from '../../src/kv/rules/summary.js';
import type { CheckRow } from '../../src/kv/rules/types.js';

const row = (rule: string, member: string | undefined, status: CheckRow['status'], detail: string, fix?: string): CheckRow => ({
  hop: '3.3 → 3.4',
  rule,
  check: `what ${rule} checks`,
  where: 'config file',
  ...(member ? { member } : {}),
  status,
  detail,
  ...(fix ? { fix } : {}),
  guide: 'https://etcd.io/docs/v3.4/upgrades/upgrade_3_4/',
});

describe('the plan: each finding once', () => {
  it('a rule every member passed is one line; members with the same words share a line; a problem keeps its guide and fix', () => {
    const rows = [
      row('log-outputs', 'kv1', 'ok', 'log-output not set'),
      row('log-outputs', 'kv2', 'ok', 'log-output not set'),
      row('trial-start', 'kv1', 'ok', 'etcd 3.4.23 served /health in 10 ms'),
      row('trial-start', 'kv2', 'ok', 'etcd 3.4.23 served /health in 12 ms'),
      row('data-trial', 'kv1', 'ok', 'does not apply: kv1 is simulated'),
      row('data-trial', 'kv2', 'ok', 'does not apply: kv2 is simulated'),
      row('gateway-v3', undefined, 'ok', 'opsctl picks the path'),
      row('enable-v2', 'kv1', 'warn', 'enable-v2 not set', 'move v2 clients'),
      row('enable-v2', 'kv2', 'warn', 'enable-v2 not set', 'move v2 clients'),
      row('ca-file', 'kv1', 'refuse', 'ca-file set', 'drop it'),
      row('ca-file', 'kv2', 'ok', 'not set'),
    ];
    expect(renderChecks(rows, '')).toEqual([
      '[log-outputs] ok on kv1, kv2: log-output not set',
      '[trial-start] ok on kv1, kv2: what trial-start checks',
      '[data-trial] does not apply on kv1, kv2',
      '[gateway-v3] ok: opsctl picks the path',
      '[enable-v2] what enable-v2 checks (config file; https://etcd.io/docs/v3.4/upgrades/upgrade_3_4/)',
      '    kv1, kv2: warn: enable-v2 not set; fix: move v2 clients',
      '[ca-file] what ca-file checks (config file; https://etcd.io/docs/v3.4/upgrades/upgrade_3_4/)',
      '    kv1: refuse: ca-file set; fix: drop it',
      '    kv2: ok: not set',
    ]);
  });

  it('the three lines: what happens, what blocks it (or what to heed), what next', () => {
    const base = {
      kind: 'upgrade' as const,
      from: '3.3',
      to: '3.4',
      hops: ['3.4'],
      members: ['kv2', 'kv3', 'kv1'],
      leader: 'kv1',
      warnings: [],
      strict: false,
    };
    const ok = [row('log-outputs', 'kv1', 'ok', 'x'), row('enable-v2', 'kv1', 'warn', 'y'), row('data-dir-0700', 'kv1', 'not checked', 'z')];
    expect(planSummary({ ...base, rows: ok, dryRun: true })).toEqual([
      'Upgrade 3.3 → 3.4, restarting the 3 members one at a time: kv2, kv3, then kv1 (the leader)',
      'Nothing blocks it: 1 of 3 findings ok; to heed: 1 warn ([enable-v2] kv1), 1 not checked ([data-dir-0700] kv1)',
      'Next: run the same command without --dry-run: it asks before the first stop (--yes: no question)',
    ]);
    const blocked = [row('ca-file', 'kv1', 'refuse', 'set'), row('trial-start', 'kv2', 'not checked', 'no driver')];
    const [, blocks, next] = planSummary({ ...base, rows: blocked, dryRun: false });
    expect(blocks).toBe('Blocked by 2 findings: [ca-file] kv1; [trial-start] kv2 (each below, with its fix)');
    expect(next).toBe(
      'Next: fix what each blocking finding names, then run the same command (a refusal judged wrong: --ignore-check RULE; a member to stop unproven: --skip-trial kv2 --skip-reason "WHY"); nothing was changed',
    );
  });

  it('"N warnings at the end of the plan" and the lines that end it come from one list', () => {
    const warnings = ['this cluster has 1 member: every restart loses quorum', '--no-backup: the data dirs are not backed up'];
    const base = { kind: 'downgrade' as const, from: '3.6', to: '3.5', hops: ['3.5'], members: ['kv1'], rows: [], strict: false, dryRun: true };
    expect(planSummary({ ...base, warnings })[1]).toBe('Nothing blocks it: 0 of 0 findings ok; to heed: 2 warnings at the end of the plan');
    expect(warningLines(warnings)).toEqual(['  ! this cluster has 1 member: every restart loses quorum', '  ! --no-backup: the data dirs are not backed up']);
    expect(planSummary({ ...base, warnings: [] })[1]).not.toContain('warning');
    expect(warningLines([])).toEqual([]);
  });

  it('the way back after a hop: kv downgrade where etcd has one (3.6 → 3.5, 3.7 → 3.6), the restore point always', () => {
    expect(downgradesBack('3.5', '3.6')).toBe(true);
    expect(downgradesBack('3.6', '3.7')).toBe(true);
    expect(downgradesBack('3.4', '3.5')).toBe(false);
    expect(versionMoved('3.5', '3.6')).toMatch(/the way back: opsctl kv downgrade --to 3\.5 .*or the hop's restore point \(opsctl kv restore --from-hop 3\.5;/);
    expect(versionMoved('3.2', '3.3')).toBe(
      "updated from 3.2: members no longer go back by a restart on 3.2 (kv rollback); the way back: the hop's restore point (opsctl kv restore --from-hop 3.2; writes after it are lost)",
    );
  });
});

describe('~ in path flags', () => {
  it('~ and ~/ are HOME (after VERSION= too); ~user and a missing HOME are refused naming the fix; elsewhere ~ is a character', () => {
    expect(expandHome('~/prod.yaml', { flag: 'cluster', home: '/home/ann' })).toBe('/home/ann/prod.yaml');
    expect(expandHome('~', { flag: 'cache', home: '/home/ann/' })).toBe('/home/ann');
    expect(expandHome('3.5=~/etcd/v3.5', { flag: 'target-bin', home: '/home/ann', keyed: true })).toBe('3.5=/home/ann/etcd/v3.5');
    expect(expandHome('3.5=~/etcd', { flag: 'target-bin', home: '/home/ann', keyed: false })).toBe('3.5=~/etcd');
    expect(expandHome('/opt/a~b', { flag: 'cluster', home: '/home/ann' })).toBe('/opt/a~b');
    expect(() => expandHome('~bob/x', { flag: 'cluster', home: '/home/ann' })).toThrow(
      /--cluster ~bob\/x: opsctl expands ~ and ~\/ \(your home\) only, not ~bob/,
    );
    expect(() => expandHome('~/x', { flag: 'cluster', home: undefined })).toThrow(/HOME is not set/);
    const flags = {
      cluster: { type: 'string', value: 'file', home: true },
      targetBin: { type: 'list', value: '[version=]dir', home: true },
      to: { type: 'string', value: 'minor' },
    };
    expect(expandHomeFlags(flags, { cluster: '~/c.yaml', targetBin: ['3.5=~/a', '~/b'], to: '~' }, '/h')).toEqual({
      cluster: '/h/c.yaml',
      targetBin: ['3.5=/h/a', '/h/b'],
      to: '~',
    });
  });
});
