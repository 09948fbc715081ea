import { describe, expect, it } from 'vitest';
import { checkHop, RULEBOOK } from '../../src/kv/rules/index.js';
import { settingsOf } from '../../src/kv/rules/settings.js';
import type { HopFacts, MemberFacts } from '../../src/kv/rules/types.js';

async function member(name: string, text?: string, file = '/etc/etcd/etcd.conf.yml'): Promise<MemberFacts> {
  return {
    name,
    ...(text === undefined ? {} : { config: { file, text }, settings: await settingsOf(text, file) }),
    dataDir: { dir: '/var/lib/etcd', mode: 0o40700 },
  };
}

const facts = (from: string, to: string, members: MemberFacts[], extra: Partial<HopFacts> = {}): HopFacts => ({
  from,
  to,
  members,
  current: true,
  auth: false,
  ...extra,
});

describe('the rulebook: one table per hop, as data', () => {
  it('every rule names what it checks, where, refuse or warn, the fix and the guide', () => {
    expect(Object.keys(RULEBOOK)).toEqual(['3.3', '3.4', '3.5', '3.6']);
    for (const rules of Object.values(RULEBOOK)) {
      for (const r of rules) {
        expect(r.id).toMatch(/^[a-z0-9.-]+$/);
        expect(r.check.length).toBeGreaterThan(10);
        expect(r.where.length).toBeGreaterThan(0);
        expect(['refuse', 'warn']).toContain(r.severity);
        expect(r.fix.length).toBeGreaterThan(10);
        expect(r.guide).toMatch(/^https:\/\//);
      }
    }
  });

  it('3.3 → 3.4: log-output as a string in a config file is refused with the fix; as a flag it is not (3.4 still reads it)', async () => {
    const rows = await checkHop(
      facts('3.3', '3.4', [
        await member('kv1', 'name: kv1\nlog-output: default\n'),
        await member('kv2', 'ExecStart=/usr/bin/etcd --log-output=stderr\n', '/etc/systemd/system/etcd.service'),
      ]),
    );
    const lo = rows.filter((r) => r.rule === 'log-outputs');
    expect(lo[0]).toMatchObject({ member: 'kv1', status: 'refuse' });
    expect(lo[0]!.fix).toMatch(/log-outputs: \[default\]/);
    expect(lo[1]).toMatchObject({ member: 'kv2', status: 'ok' });
  });

  it('3.3 → 3.4: --ca-file refused, data dir 0755 warned, enable-v2 off warned with the v2 data measured', async () => {
    const m = await member('kv1', 'ETCD_CA_FILE=/etc/ca.pem\nETCD_NAME=kv1\n', '/etc/default/etcd');
    m.dataDir = { dir: '/var/lib/etcd', mode: 0o40755 };
    const rows = await checkHop(facts('3.3', '3.4', [m], { v2: { bytes: 1234, on: 'measured on kv1' } }));
    expect(rows.find((r) => r.rule === 'ca-file')).toMatchObject({ status: 'refuse' });
    expect(rows.find((r) => r.rule === 'ca-file')!.detail).toContain('environment ETCD_CA_FILE');
    expect(rows.find((r) => r.rule === 'data-dir-0700')).toMatchObject({ status: 'warn', detail: '/var/lib/etcd is 0755, not 0700' });
    expect(rows.find((r) => r.rule === 'enable-v2')!.detail).toMatch(/v2 data measured before the hop: 1234 bytes/);
  });

  it('a check that cannot run is a "not checked" row with why, never left out', async () => {
    const rows = await checkHop(facts('3.3', '3.4', [{ name: 'kv1' }], { auth: { why: 'no member answered' } }));
    const nc = rows.filter((r) => r.status === 'not checked');
    expect(nc.map((r) => r.rule)).toEqual(expect.arrayContaining(['log-outputs', 'ca-file', 'enable-v2', 'data-dir-0700']));
    expect(nc.every((r) => r.detail.length > 10)).toBe(true);
  });

  it('3.4 → 3.5: auth refused naming the restore way; v2 data refused; removed log flags; 3.5.0-3.5.2 refused', async () => {
    const rows = await checkHop(
      facts('3.4', '3.5', [await member('kv1', 'ExecStart=/usr/bin/etcd --debug --log-package-levels etcdmain=DEBUG\n', 'etcd.service')], {
        auth: true,
        v2: { bytes: 5000, on: 'measured on kv1 (3.3.27)' },
        binaryVersion: '3.5.1',
      }),
    );
    const by = (id: string) => rows.find((r) => r.rule === id)!;
    expect(by('auth-rolling')).toMatchObject({ status: 'refuse' });
    expect(by('auth-rolling').fix).toMatch(/kv restore --snapshot FILE --to-version 3\.5/);
    expect(by('v2-data')).toMatchObject({ status: 'refuse' });
    expect(by('removed-log-flags').detail).toMatch(/debug is gone in 3\.5.*log-package-levels is gone/);
    expect(by('target-3.5.3')).toMatchObject({ status: 'refuse', detail: 'the 3.5 binary is 3.5.1' });
  });

  it('3.5 → 3.6: members before 3.5.26 refused; --enable-v2 refused; experimental flags named with their new names; etcdutl not run is "not checked"', async () => {
    const m = await member('kv1', 'ExecStart=/usr/bin/etcd --enable-v2 --experimental-initial-corrupt-check=true\n', 'etcd.service');
    m.serverVersion = '3.5.21';
    const rows = await checkHop(facts('3.5', '3.6', [m]));
    const by = (id: string) => rows.find((r) => r.rule === id)!;
    expect(by('from-3.5.26')).toMatchObject({ status: 'refuse', detail: 'runs 3.5.21' });
    expect(by('enable-v2-gone')).toMatchObject({ status: 'refuse' });
    expect(by('experimental-renamed').detail).toContain('--feature-gates=InitialCorruptCheck=true');
    expect(by('v2store-check')).toMatchObject({ status: 'not checked', detail: 'etcdutl was not run' });
  });

  it("3.5 → 3.6: a failed etcdutl check v2store refuses naming the member, what etcdutl said and the guide's fix for it", async () => {
    const v2store = [
      { member: 'kv1', ok: false, detail: 'etcdutl check v2store: Error: detected custom v2 content in WAL records' },
      { member: 'kv2', ok: false, detail: 'etcdutl check v2store: Error: detected custom v2 content in both v2store and WAL records' },
      { member: 'kv3', ok: true, detail: 'etcdutl check v2store: No custom content found in both v2store and WAL records.' },
    ];
    const m = (n: string) => ({ name: n, serverVersion: '3.5.35' });
    const rows = (await checkHop(facts('3.5', '3.6', [m('kv1'), m('kv2'), m('kv3')], { v2store }))).filter((r) => r.rule === 'v2store-check');
    expect(rows.map((r) => `${r.member}:${r.status}`)).toEqual(['kv1:refuse', 'kv2:refuse', 'kv3:ok']);
    expect(rows[0]!.detail).toMatch(/WAL records; fix: restart kv1 once on 3\.5 with --snapshot-count=1 .*put its old snapshot-count back/);
    expect(rows[0]!.detail).not.toMatch(/remove the custom v2 keys/);
    expect(rows[1]!.detail).toMatch(/fix: remove the custom v2 keys while the v2 API is on .*then restart kv2 once on 3\.5 with --snapshot-count=1/);
  });

  it('3.5 → 3.6: a member on 3.5.26-3.5.31 is warned to take 3.5.32+ (WAL-aware check v2store); 3.5.35 is ok', async () => {
    const at = (v: string) => ({ name: `m${v}`, serverVersion: v });
    const rows = (await checkHop(facts('3.5', '3.6', [at('3.5.26'), at('3.5.35')]))).filter((r) => r.rule === 'from-3.5.32');
    expect(rows.map((r) => `${r.member}:${r.status}`)).toEqual(['m3.5.26:warn', 'm3.5.35:ok']);
    expect(rows[0]!.fix).toMatch(/3\.5\.32 or later/);
  });
});
