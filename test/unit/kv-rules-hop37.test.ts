import { describe, expect, it } from 'vitest';
import { checkHop, RULEBOOK } from '../../src/kv/rules/index.js';
import { settingsOf } from '../../src/kv/rules/settings.js';
import { REMOVED_37 } from '../../src/kv/rules/experimental.js';
import type { CheckRow, HopFacts, MemberFacts } from '../../src/kv/rules/types.js';

/** A member whose settings are read from `text` (a unit, an environment file or a YAML config file), as the rules read them. */
async function member(name: string, text: string, file = 'etcd.service', serverVersion = '3.6.16'): Promise<MemberFacts> {
  return { name, serverVersion, config: { file, text }, settings: await settingsOf(text, file) };
}

const facts = (members: MemberFacts[], extra: Partial<HopFacts> = {}): HopFacts => ({ from: '3.6', to: '3.7', members, current: true, auth: false, ...extra });
const rowsOf = (rows: CheckRow[], rule: string) => rows.filter((r) => r.rule === rule);

/** kubeadm's etcd static pod, as a systemd unit copied it. */
const KUBEADM =
  'ExecStart=/usr/local/bin/etcd --name kv1 --data-dir /var/lib/etcd --experimental-initial-corrupt-check=true --experimental-watch-progress-notify-interval=5s\n';

describe('the 3.6 → 3.7 rulebook (the 3.7 upgrade guide and CHANGELOG-3.7)', () => {
  it('has the trial, the 3.6.11 floor, the removed experimental flags and what is left of v2, each with its guide', () => {
    expect(RULEBOOK['3.7']!.map((r) => r.id)).toEqual([
      'trial-start',
      'from-3.6.11',
      'experimental-removed',
      'wal-v2-replay',
      'v2-discovery-removed',
      'v2-deprecation-enforced',
      'v2-deprecation-ignored',
      'enable-v2-gone',
    ]);
    expect(RULEBOOK['3.7']!.find((r) => r.id === 'from-3.6.11')!.guide).toBe('https://etcd.io/docs/v3.7/upgrades/upgrade_3_7/');
    // exactly the 23 flags 3.6.16's --help has and 3.7.3's lacks
    expect(Object.keys(REMOVED_37)).toHaveLength(23);
    expect(Object.keys(REMOVED_37).every((k) => k.startsWith('experimental-'))).toBe(true);
  });

  it("kubeadm's two flags: ONE refusal per member naming both, each with its exact replacement", async () => {
    const rows = rowsOf(await checkHop(facts([await member('kv1', KUBEADM)])), 'experimental-removed');
    expect(rows).toHaveLength(1);
    const r = rows[0]!;
    expect(r).toMatchObject({ member: 'kv1', status: 'refuse' });
    expect(r.detail).toContain('2 removed in 3.7');
    expect(r.detail).toContain('--experimental-initial-corrupt-check=true (flag --experimental-initial-corrupt-check in systemd unit etcd.service)');
    expect(r.detail).toContain('--experimental-watch-progress-notify-interval=5s (flag --experimental-watch-progress-notify-interval');
    expect(r.detail).toContain('3.7 exits at start ("flag provided but not defined")');
    expect(r.detail).toContain(
      'fix: replace the flags --experimental-initial-corrupt-check=true, --experimental-watch-progress-notify-interval=5s with --feature-gates=InitialCorruptCheck=true --watch-progress-notify-interval=5s',
    );
  });

  it('every form: an ETCD_EXPERIMENTAL_* variable and a config file key are refused too (3.7 drops them silently), in their own form', async () => {
    const env = await member(
      'kv2',
      'Environment=ETCD_EXPERIMENTAL_COMPACT_HASH_CHECK_ENABLED=true\nEnvironment=ETCD_FEATURE_GATES=StopGRPCServiceOnDefrag=true\nEnvironment=ETCD_EXPERIMENTAL_CORRUPT_CHECK_TIME=5m\nExecStart=/usr/bin/etcd\n',
    );
    const file = await member(
      'kv3',
      'name: kv3\nexperimental-initial-corrupt-check: true\nexperimental-snapshot-catch-up-entries: 5000\nexperimental-compaction-batch-limit: 100\n',
      '/etc/etcd/etcd.yaml',
    );
    const clean = await member('kv4', 'ExecStart=/usr/bin/etcd --feature-gates=InitialCorruptCheck=true --watch-progress-notify-interval=5s\n');
    const rows = rowsOf(await checkHop(facts([env, file, clean])), 'experimental-removed');
    expect(rows.map((r) => `${r.member}:${r.status}`)).toEqual(['kv2:refuse', 'kv3:refuse', 'kv4:ok']);
    // the gates already set in that form are kept in the one feature-gates setting
    expect(rows[0]!.detail).toContain('unrecognized environment variable');
    expect(rows[0]!.detail).toContain(
      'replace the variables ETCD_EXPERIMENTAL_COMPACT_HASH_CHECK_ENABLED=true, ETCD_EXPERIMENTAL_CORRUPT_CHECK_TIME=5m with ETCD_FEATURE_GATES=StopGRPCServiceOnDefrag=true,CompactHashCheck=true ETCD_CORRUPT_CHECK_TIME=5m',
    );
    expect(rows[1]!.detail).toContain('3 removed in 3.7');
    expect(rows[1]!.detail).toContain('3.7 ignores the key and starts without the setting');
    // the config file's own spelling of snapshot-catchup-entries is known too
    expect(rows[1]!.detail).toContain(
      'replace the config file keys experimental-initial-corrupt-check: true, experimental-snapshot-catch-up-entries: 5000, experimental-compaction-batch-limit: 100 with feature-gates: InitialCorruptCheck=true, snapshot-catchup-entries: 5000, compaction-batch-limit: 100',
    );
    expect(rows[2]!.detail).toBe('none of the 24 removed --experimental-* names set');
  });

  it("a WAL with v2 requests after its newest snapshot (3.5's attribute PUTs) is refused per member; none is ok; a later hop is read before it; unread is not checked", async () => {
    const walReplay: HopFacts['walReplay'] = [
      { member: 'kv1', snapshotIndex: 0, count: 4, after: { PUT: 4 } },
      { member: 'kv2', snapshotIndex: 36, count: 0, after: {} },
    ];
    const rows = rowsOf(await checkHop(facts([{ name: 'kv1' }, { name: 'kv2' }], { walReplay })), 'wal-v2-replay');
    expect(rows.map((r) => `${r.member}:${r.status}`)).toEqual(['kv1:refuse', 'kv2:ok']);
    expect(rows[0]!.detail).toBe('4 v2 requests (4 PUT) after its newest snapshot (index 0): 3.7 would panic replaying them');
    expect(rows[0]!.fix).toMatch(/restart that member once on 3\.6 with --snapshot-count=1/);
    const later = rowsOf(await checkHop(facts([{ name: 'kv1' }], { current: false })), 'wal-v2-replay');
    expect(later[0]).toMatchObject({ status: 'before the hop' });
    const remote = rowsOf(await checkHop(facts([{ name: 'kv1' }], { walReplay: { why: "each member's WAL is on its host" } })), 'wal-v2-replay');
    expect(remote[0]).toMatchObject({ status: 'not checked', detail: "each member's WAL is on its host" });
  });

  it('a member whose settings could not be read is "not checked", with why', async () => {
    const rows = rowsOf(await checkHop(facts([{ name: 'kv5', settings: { why: 'ssh kv5: connection refused' } }])), 'experimental-removed');
    expect(rows[0]).toMatchObject({ member: 'kv5', status: 'not checked', detail: 'ssh kv5: connection refused' });
  });

  it('the 3.6 floor: 3.6.10 refused, 3.6.11 ok; a planned patch hop inside 3.6 is judged by the release it brings; a later hop by the 3.6 binary', async () => {
    const at = (v: string): MemberFacts => ({ name: `m${v}`, serverVersion: v });
    const rows = rowsOf(await checkHop(facts([at('3.6.10'), at('3.6.11')])), 'from-3.6.11');
    expect(rows.map((r) => `${r.member}:${r.status}`)).toEqual(['m3.6.10:refuse', 'm3.6.11:ok']);
    expect(rows[0]!.fix).toMatch(/patch hop inside 3\.6 .*--target-bin 3\.6=DIR of 3\.6\.11 or later/);
    expect(rows[0]!.check).toContain('earlier 3.6 patch releases may not be compatible with a rolling upgrade to 3.7');
    const planned = rowsOf(await checkHop(facts([at('3.6.2')], { patchHopPlanned: true, startsFrom: '3.6.16' })), 'from-3.6.11');
    expect(planned[0]).toMatchObject({ status: 'ok', detail: 'a patch hop inside 3.6 to 3.6.16 is planned first' });
    const later = rowsOf(await checkHop(facts([at('3.2.32')], { current: false, startsFrom: '3.6.5' })), 'from-3.6.11');
    expect(later[0]).toMatchObject({ status: 'refuse', detail: 'the members will run 3.6.5 after the 3.6 hop' });
  });

  it('what is left of v2: --discovery refused as a flag, v2-deprecation not-yet as a flag refused and skip-check only said (3.7.3 ignores it), enable-v2 as a flag refused (the variable and the key only said: 3.7.3 starts with them)', async () => {
    const rows = await checkHop(
      facts([
        await member('kv1', 'ExecStart=/usr/bin/etcd --discovery=https://discovery.example/abc --v2-deprecation=write-only-skip-check --enable-v2=true\n'),
        await member('kv2', 'name: kv2\ndiscovery: https://discovery.example/abc\nv2-deprecation: write-only\nenable-v2: true\n', '/etc/etcd.yaml'),
        await member('kv3', 'Environment=ETCD_ENABLE_V2=true\nExecStart=/usr/bin/etcd\n'),
      ]),
    );
    const of = (id: string) => rowsOf(rows, id).map((r) => `${r.member}:${r.status}`);
    expect(of('v2-discovery-removed')).toEqual(['kv1:refuse', 'kv2:ok', 'kv3:ok']);
    // (measured on 3.7.3: write-only-skip-check starts it, warning; not-yet as a flag is "invalid value")
    expect(of('v2-deprecation-enforced')).toEqual(['kv1:ok', 'kv2:ok', 'kv3:ok']);
    expect(of('v2-deprecation-ignored')).toEqual(['kv1:warn', 'kv2:ok', 'kv3:ok']);
    expect(of('enable-v2-gone')).toEqual(['kv1:refuse', 'kv2:ok', 'kv3:ok']);
    expect(rowsOf(rows, 'enable-v2-gone')[0]!.detail).toMatch(/flag --enable-v2 .*"flag provided but not defined" in 3\.7/);
    expect(rowsOf(rows, 'enable-v2-gone')[2]!.detail).toMatch(
      /environment ETCD_ENABLE_V2 .*: ignored: etcd starts without it, warning "unrecognized environment variable"/,
    );
    expect(rowsOf(rows, 'v2-deprecation-ignored')[0]!.detail).toMatch(/warning "The default value is enforced, ignoring user input"/);
    expect(rowsOf(rows, 'v2-discovery-removed')[0]!.detail).toMatch(/"flag provided but not defined: -discovery"/);
    const notYet = await checkHop(
      facts([
        await member('kv1', 'ExecStart=/usr/bin/etcd --v2-deprecation=not-yet\n'),
        await member('kv2', 'Environment=ETCD_V2_DEPRECATION=not-yet\nExecStart=/usr/bin/etcd\n'),
        await member('kv3', 'name: kv3\nv2-deprecation: not-yet\n', '/etc/etcd.yaml'),
      ]),
    );
    expect(rowsOf(notYet, 'v2-deprecation-enforced').map((r) => `${r.member}:${r.status}`)).toEqual(['kv1:refuse', 'kv2:refuse', 'kv3:ok']);
    expect(rowsOf(notYet, 'v2-deprecation-enforced')[0]!.detail).toMatch(/3\.7 exits with "invalid value "not-yet" for flag -v2-deprecation"/);
    expect(rowsOf(notYet, 'v2-deprecation-enforced')[1]!.detail).toMatch(/3\.7 exits with "invalid value "not-yet" for ETCD_V2_DEPRECATION"/);
    expect(rowsOf(notYet, 'v2-deprecation-ignored').map((r) => `${r.member}:${r.status}`)).toEqual(['kv1:ok', 'kv2:ok', 'kv3:warn']);
  });
});
