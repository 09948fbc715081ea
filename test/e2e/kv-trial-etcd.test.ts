import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type RealTestCluster } from '../framework/index.js';
import { etcdLadderDirs } from '../helpers/etcd-releases.js';

/**
 * The target binary as the judge (src/kv/trial), on real etcd of every hop: five 3.2.32 members, each
 * with one setting that 3.2 starts with and a later version refuses at start, as an operator's units
 * and config files have them. `kv upgrade --to 3.6` must refuse before anything stops, by the trial
 * alone (the rules for these five switched off with --ignore-check) and with the rules (which name
 * the guide's fix). The members are run by a control script through the command driver, and the
 * trial reads each one's command line, ETCD_* environment and config file from /proc, and starts
 * each hop's binary here (`--trial-cmd 'sh -s'`, as `ssh {host} sudo sh -s` on a real host).
 */
const dirs = etcdLadderDirs();

describe.runIf(Boolean(dirs))('the trial start: five settings each refused by a later hop, before any stop (real etcd 3.2.32 → 3.6)', () => {
  let c: RealTestCluster;
  let file: string;
  const opsctl = (...args: string[]) => c.opsctl(...args);
  const bins = () => [
    '--target-bin',
    `3.3=${dirs!.v33}`,
    '--target-bin',
    `3.4=${dirs!.v34}`,
    '--target-bin',
    `3.5=${dirs!.v35}`,
    '--target-bin',
    `3.6=${dirs!.v36}`,
  ];
  const pids = () => c.members.map((m) => c.pid(m));

  beforeAll(async () => {
    c = await startCluster({
      members: 'real',
      size: 5,
      version: '3.2',
      file: { extra: ['trial: sh -s'] },
      bins: { '3.2': dirs!.v32 },
      // etcd1, etcd2: a config file (3.4 refuses log-output as a string there; 3.5 refuses the capnslog logger)
      extraConfig: (m) => ({ etcd1: 'log-output: default', etcd2: 'logger: capnslog' })[m.name] ?? '',
      // etcd3-5: flags and the environment, as a unit's ExecStart and Environment= give them
      flags: (m) =>
        ({
          etcd3: { args: [], env: { ETCD_NAME: 'etcd3' } }, // shadowed by --name: 3.3 warns, 3.4 exits
          etcd4: { args: ['--proxy', 'off'] }, // the v2 proxy's flag: gone in 3.6
          etcd5: { args: ['--discovery-fallback=proxy'] }, // 3.5's default value, refused by 3.6
        })[m.name],
    });
    file = c.file;
  }, 120_000);

  afterAll(() => c?.destroy());

  const expectNothingStopped = (before: Array<number | undefined>) => {
    expect(pids()).toEqual(before);
    for (const m of c.members) expect(c.alive(m)).toBe(true);
    expect(existsSync(join(c.configDir, 'data', 'kv', 'journals'))).toBe(false);
  };

  it('by the trial alone (the five rules switched off): each refusal quotes the binary, names the member, the setting and where it is set', async () => {
    const before = pids();
    const r = await opsctl(
      'kv',
      'upgrade',
      '--to',
      '3.6',
      '--yes',
      '--no-backup',
      '--cluster',
      file,
      ...bins(),
      '--ignore-check',
      'log-outputs,logger-capnslog,env-shadowed,proxy-removed,discovery-fallback-proxy,removed-log-flags',
    );
    expect(r.exitCode, String(r.stderr)).toBe(1);
    const err = String(r.stderr);
    expect(err).toMatch(
      /3\.3 → 3\.4 \[trial-start\] member etcd1: etcd 3\.4\.\d+ exited \(1\) in \d+ ms: "[^"]*cannot unmarshal string into Go struct field configYAML\.log-output of type \[\]string[^"]*"; the setting: log-output = "default" \(config file [^)]*etcd1\/etcd\.yaml on 127\.0\.0\.1\)/,
    );
    expect(err).toMatch(
      /3\.3 → 3\.4 \[trial-start\] member etcd3: etcd 3\.4\.\d+ exited \(1\) in \d+ ms: "[^"]*conflicting environment variable \\?"?ETCD_NAME\\?"? is shadowed by corresponding command-line flag[^"]*"; the settings: name = "etcd3" \(flag --name in the command line of pid \d+ on 127\.0\.0\.1 \(\/proc\)\), name = "etcd3" \(environment ETCD_NAME in the environment of pid \d+/,
    );
    expect(err).toMatch(
      /3\.4 → 3\.5 \[trial-start\] member etcd2: etcd 3\.5\.\d+ exited \(1\) in \d+ ms: "failed to verify flags: --logger=capnslog is removed in v3\.5"; the setting: logger = "capnslog" \(config file/,
    );
    expect(err).toMatch(
      /3\.5 → 3\.6 \[trial-start\] member etcd4: etcd 3\.6\.\d+ exited \(2\) in \d+ ms: "flag provided but not defined: -proxy"; the setting: proxy = "off" \(flag --proxy in the command line of pid \d+/,
    );
    expect(err).toMatch(
      /3\.5 → 3\.6 \[trial-start\] member etcd5: etcd 3\.6\.\d+ exited \(1\) in \d+ ms: "failed to verify flags: v2 proxy is deprecated, and --discovery-fallback can't be configured as \\?"proxy\\?""; the setting: discovery-fallback = "proxy"/,
    );
    if (process.env.SHOW) console.log(err);
    // 3.2 → 3.3 takes every one of them: no refusal there
    expect(err).not.toMatch(/3\.2 → 3\.3 \[trial-start\]/);
    expect(err).toMatch(/nothing was stopped or changed/);
    expectNothingStopped(before);
  }, 300_000);

  it("with the rules: each of the five named by its rule with the guide's fix, the trial beside it; --dry-run shows the same plan", async () => {
    const before = pids();
    const r = await opsctl('kv', 'upgrade', '--to', '3.6', '--yes', '--no-backup', '--cluster', file, ...bins());
    expect(r.exitCode, String(r.stderr)).toBe(1);
    const err = String(r.stderr);
    expect(err).toMatch(/3\.3 → 3\.4 \[log-outputs\] member etcd1: .*log-output: "default".*fix: write log-outputs: \[default\]/);
    expect(err).toMatch(/3\.3 → 3\.4 \[env-shadowed\] member etcd3: environment ETCD_NAME .* is shadowed by --name: 3\.4 exits.*fix: set each setting once/);
    expect(err).toMatch(/3\.4 → 3\.5 \[logger-capnslog\] member etcd2: .*fix: set logger: zap/);
    expect(err).toMatch(/3\.5 → 3\.6 \[proxy-removed\] member etcd4: .*--proxy is gone in 3\.6.*fix: drop --proxy/);
    expect(err).toMatch(/3\.5 → 3\.6 \[discovery-fallback-proxy\] member etcd5: .*fix: set --discovery-fallback=exit/);
    for (const m of ['etcd1', 'etcd3']) expect(err).toMatch(new RegExp(`3\\.3 → 3\\.4 \\[trial-start\\] member ${m}: etcd 3\\.4`));
    expectNothingStopped(before);
    const plan = await opsctl('kv', 'upgrade', '--to', '3.6', '--dry-run', '--no-backup', '--cluster', file, ...bins());
    // (a dry run shows the whole plan, then exits 1: the run it shows would be refused)
    expect(plan.exitCode, String(plan.stderr)).toBe(1);
    const shown = `${String(plan.stdout)}${String(plan.stderr)}`;
    expect(shown).toMatch(/Trials: 20 of 20 starts with each member's settings ran/);
    // (members with etcd's own election timing: where a member's data trial got through its start of a hop's binary,
    // that start is its settings trial's too; where it did not, the settings trial's own start names the setting)
    expect(shown).toMatch(/Trials: 20 of 20 starts with each member's settings ran \([1-9]\d* of them the start on a copy of the member's data below/);
    expect(shown).toMatch(
      /\[trial-start\][^\n]*\n(\s+[^\n]*\n)*?\s+etcd\d(, etcd\d)*: ok: etcd 3\.\d+\.\d+ started with its settings \(.*\) in \d+ ms: its data trial's start, on a copy of its data/,
    );
    expect(shown).toMatch(/etcd4: refuse: etcd 3\.6\.\d+ exited \(2\)/);
    // (a rule every member passed: one line; each member's finding is in --json)
    expect(shown).toMatch(/\[trial-start\] ok on etcd1, etcd2, etcd3, etcd4, etcd5: /);
    expectNothingStopped(before);
  }, 300_000);
});
