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
    expect(Object.keys(RULEBOOK)).toEqual(['3.3', '3.4', '3.5', '3.6', '3.7']);
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
    // (the variable is ignored, not "flag provided but not defined": measured on 3.4.23; the CA not trusted all the same)
    expect(rows.find((r) => r.rule === 'ca-file')!.detail).toMatch(/unrecognized environment variable"?: the CA would not be trusted/);
    expect(rows.find((r) => r.rule === 'data-dir-0700')).toMatchObject({ status: 'warn', detail: '/var/lib/etcd is 0755, not 0700' });
    expect(rows.find((r) => r.rule === 'enable-v2')!.detail).toMatch(/v2 data measured before the hop: 1234 bytes/);
  });

  it('3.2 → 3.3: auth on and a member before 3.2.31 is refused naming the member and why (the seed); 3.2.31, or auth off, goes on', async () => {
    const m = (name: string, serverVersion: string): MemberFacts => ({ name, serverVersion });
    const rows = await checkHop(facts('3.2', '3.3', [m('m1', '3.2.32'), m('m2', '3.2.30'), m('m3', '3.2.32')], { auth: true }));
    const auth = rows.filter((r) => r.rule === 'auth-3.2.31');
    expect(auth.filter((r) => r.status === 'refuse').map((r) => r.member)).toEqual(['m2']);
    expect(auth.find((r) => r.member === 'm2')?.detail).toMatch(/runs 3\.2\.30 and auth is enabled: .*unauthorized lease revoke.*corrupt data/);
    expect(auth.find((r) => r.member === 'm2')?.fix).toMatch(/3\.2\.31 or later first/);
    const ok = await checkHop(facts('3.2', '3.3', [m('m1', '3.2.31'), m('m2', '3.2.32')], { auth: true }));
    expect(ok.filter((r) => r.rule === 'auth-3.2.31' && r.status === 'refuse')).toEqual([]);
    const off = await checkHop(facts('3.2', '3.3', [m('m1', '3.2.10')], { auth: false }));
    expect(off.filter((r) => r.rule === 'auth-3.2.31' && r.status === 'refuse')).toEqual([]);
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

  it('3.5 → 3.6: members before 3.5.32 refused; --enable-v2 refused; experimental flags named with their new names; etcdutl not run is "not checked"', async () => {
    const m = await member('kv1', 'ExecStart=/usr/bin/etcd --enable-v2 --experimental-initial-corrupt-check=true\n', 'etcd.service');
    m.serverVersion = '3.5.21';
    const rows = await checkHop(facts('3.5', '3.6', [m]));
    const by = (id: string) => rows.find((r) => r.rule === id)!;
    expect(by('from-3.5.32')).toMatchObject({ status: 'refuse', detail: 'runs 3.5.21' });
    expect(by('enable-v2-gone')).toMatchObject({ status: 'refuse' });
    // the variable is not the flag: 3.6.16 starts with ETCD_ENABLE_V2=true (warning "unrecognized environment variable")
    const env = await member('kv2', 'Environment=ETCD_ENABLE_V2=true\nExecStart=/usr/bin/etcd\n', 'etcd.service');
    env.serverVersion = '3.5.35';
    const gone = (await checkHop(facts('3.5', '3.6', [env]))).find((r) => r.rule === 'enable-v2-gone')!;
    expect(gone).toMatchObject({ status: 'ok' });
    expect(gone.detail).toMatch(/ETCD_ENABLE_V2.*unrecognized environment variable.*3\.6 serves no v2 API: drop the variable/);
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

  it("3.5 → 3.6: a member on 3.5.26-3.5.31 is refused (the guide's 3.5.32 floor since August 2026); 3.5.35 is ok; a planned patch hop to 3.5.31 is refused too", async () => {
    const at = (v: string) => ({ name: `m${v}`, serverVersion: v });
    const rows = (await checkHop(facts('3.5', '3.6', [at('3.5.26'), at('3.5.35')]))).filter((r) => r.rule === 'from-3.5.32');
    expect(rows.map((r) => `${r.member}:${r.status}`)).toEqual(['m3.5.26:refuse', 'm3.5.35:ok']);
    expect(rows[0]!.fix).toMatch(/patch hop inside 3\.5/);
    const patched = (await checkHop(facts('3.5', '3.6', [at('3.5.26')], { patchHopPlanned: true, startsFrom: '3.5.31' }))).find(
      (r) => r.rule === 'from-3.5.32',
    );
    expect(patched).toMatchObject({ status: 'refuse', detail: 'the patch hop inside 3.5 would bring the members to 3.5.31, below 3.5.32' });
    const ok = (await checkHop(facts('3.5', '3.6', [at('3.5.26')], { patchHopPlanned: true, startsFrom: '3.5.35' }))).find((r) => r.rule === 'from-3.5.32');
    expect(ok).toMatchObject({ status: 'ok' });
  });

  it('3.3 → 3.4: an ETCD_* variable shadowed by the same flag is refused (3.4 exits); beside a config file it is not (etcd reads neither then)', async () => {
    const shadowed = await member(
      'kv1',
      'Environment=ETCD_NAME=kv1\nExecStart=/usr/bin/etcd --name kv1 --data-dir /var/lib/etcd\n',
      '/etc/systemd/system/etcd.service',
    );
    const single = await member('kv2', 'Environment=ETCD_NAME=kv2\nExecStart=/usr/bin/etcd --data-dir /var/lib/etcd\n', '/etc/systemd/system/etcd.service');
    const withFile: MemberFacts = {
      name: 'kv3',
      settings: {
        source: 'x',
        list: [
          { key: 'name', value: 'kv3', from: 'config file /etc/etcd.yml', flag: false },
          { key: 'name', value: 'kv3', from: 'environment ETCD_NAME', flag: true, env: true },
          { key: 'name', value: 'kv3', from: 'flag --name', flag: true },
        ],
      },
    };
    const rows = (await checkHop(facts('3.3', '3.4', [shadowed, single, withFile]))).filter((r) => r.rule === 'env-shadowed');
    expect(rows.map((r) => `${r.member}:${r.status}`)).toEqual(['kv1:refuse', 'kv2:ok', 'kv3:ok']);
    expect(rows[0]!.detail).toMatch(/environment ETCD_NAME .* is shadowed by --name: 3\.4 exits/);
    expect(rows[0]!.fix).toMatch(/unset the variable .* or drop the flag/);
  });

  it("3.4 → 3.5: logger capnslog (3.4's default) is refused, wherever it is set; zap is ok", async () => {
    const rows = (
      await checkHop(
        facts('3.4', '3.5', [
          await member('kv1', 'name: kv1\nlogger: capnslog\n'),
          await member('kv2', 'ExecStart=/usr/bin/etcd --logger=capnslog\n', 'etcd.service'),
          await member('kv3', 'name: kv3\nlogger: zap\n'),
        ]),
      )
    ).filter((r) => r.rule === 'logger-capnslog');
    expect(rows.map((r) => `${r.member}:${r.status}`)).toEqual(['kv1:refuse', 'kv2:refuse', 'kv3:ok']);
    expect(rows[0]!.detail).toContain('--logger=capnslog is removed in v3.5');
    expect(rows[0]!.fix).toMatch(/logger: zap/);
  });

  it('3.5 → 3.6: --proxy (even off) and --proxy-* flags refused, in a config file ignored; --discovery-fallback=proxy refused as a flag or variable', async () => {
    const rows = await checkHop(
      facts('3.5', '3.6', [
        await member('kv1', 'ExecStart=/usr/bin/etcd --proxy off --proxy-dial-timeout=1000\n', 'etcd.service'),
        await member('kv2', 'name: kv2\nproxy: "off"\ndiscovery-fallback: proxy\n'),
        await member('kv3', 'Environment=ETCD_DISCOVERY_FALLBACK=proxy\nEnvironment=ETCD_PROXY=off\nExecStart=/usr/bin/etcd\n', 'etcd.service'),
      ]),
    );
    const of = (id: string) => rows.filter((r) => r.rule === id).map((r) => `${r.member}:${r.status}`);
    // (ETCD_PROXY is ignored by 3.6.16, "unrecognized environment variable"; ETCD_DISCOVERY_FALLBACK is read and refused)
    expect(of('proxy-removed')).toEqual(['kv1:refuse', 'kv2:ok', 'kv3:ok']);
    expect(rows.find((r) => r.rule === 'proxy-removed' && r.member === 'kv3')!.detail).toMatch(/ETCD_PROXY.*unrecognized environment variable/);
    expect(rows.find((r) => r.rule === 'proxy-removed')!.detail).toMatch(/--proxy is gone in 3\.6.*--proxy-dial-timeout is gone/);
    expect(of('discovery-fallback-proxy')).toEqual(['kv1:ok', 'kv2:ok', 'kv3:refuse']);
  });

  it('every hop, a patch hop too, has the binary\'s trial: its findings are the rule\'s rows; none run is "not checked"', async () => {
    for (const [from, to] of [
      ['3.2', '3.3'],
      ['3.3', '3.4'],
      ['3.4', '3.5'],
      ['3.5', '3.5'],
      ['3.5', '3.6'],
      ['3.6', '3.6'],
      ['3.6', '3.7'],
    ] as const) {
      const rows = await checkHop(
        facts(from, to, [{ name: 'kv1' }, { name: 'kv2' }], {
          trials: [
            { member: 'kv1', result: 'ok', detail: 'served /health' },
            { member: 'kv2', result: 'problem', detail: 'exited (1): "flag provided but not defined: -proxy"' },
          ],
        }),
      );
      const t = rows.filter((r) => r.rule === 'trial-start');
      expect(
        t.map((r) => `${r.member}:${r.status}`),
        `${from} → ${to}`,
      ).toEqual(['kv1:ok', 'kv2:refuse']);
    }
    const none = (await checkHop(facts('3.3', '3.4', [{ name: 'kv1' }], { trials: { why: 'no driver' } }))).find((r) => r.rule === 'trial-start');
    expect(none).toMatchObject({ status: 'not checked', detail: 'no driver' });
  });
});
