import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type RealTestCluster } from '../framework/index.js';
import { etcdLadderDirs } from '../helpers/etcd-releases.js';

/**
 * Proof before every stop, by default (issue 43), on real etcd 3.5.35 → 3.6.16: three members run with
 * `--discovery-fallback=proxy` on their command lines (3.6 refuses it at start), driven by command
 * templates with no trial template. opsctl finds each member on this host by the socket on its client
 * port and reads its settings from /proc itself; 3.6's trial refuses every member before any stop, the
 * rule for the flag switched off or not. A hop whose binary is not known refuses too, --dry-run
 * included (exit 1): nothing is ever stopped for an upgrade that could not work.
 */
const dirs = etcdLadderDirs();

describe.runIf(Boolean(dirs))('nothing stops unproven: 3.5.35 members with a flag 3.6 refuses, no trial template (real etcd)', () => {
  let c: RealTestCluster;
  let file: string;
  const opsctl = (...args: string[]) => c.opsctl(...args);
  const pids = () => c.members.map((m) => c.pid(m));
  const expectNothingStopped = (before: Array<number | undefined>) => {
    expect(pids()).toEqual(before);
    for (const m of c.members) expect(c.alive(m)).toBe(true);
    expect(existsSync(join(c.configDir, 'data', 'kv', 'journals'))).toBe(false);
  };

  beforeAll(async () => {
    // stop, start, running and backup templates only: no trial template
    c = await startCluster({
      members: 'real',
      size: 3,
      version: '3.5',
      bins: { '3.5': dirs!.v35, '3.6': dirs!.v36 },
      flags: () => ({ args: ['--discovery-fallback=proxy'] }),
      file: (real) => ({ extra: [`backup: cp -a ${real.dir}/{name} ${real.dir}/{name}.bak-{run}`], bins: false }),
    });
    file = c.file;
  }, 120_000);

  afterAll(() => c?.destroy());

  it("the trial alone (the flag's rule switched off) refuses every member before any stop, the flag named where it is set", async () => {
    const before = pids();
    const r = await opsctl(
      'kv',
      'upgrade',
      '--to',
      '3.6',
      '--yes',
      '--cluster',
      file,
      '--target-bin',
      `3.6=${dirs!.v36}`,
      '--ignore-check',
      'discovery-fallback-proxy',
    );
    const err = String(r.stderr);
    expect(r.exitCode, err).toBe(1);
    for (const m of c.members)
      expect(err).toMatch(
        new RegExp(
          `3\\.5 → 3\\.6 \\[trial-start\\] member ${m.name}: etcd 3\\.6\\.\\d+ exited \\(1\\) in \\d+ ms: "failed to verify flags: v2 proxy is deprecated, and --discovery-fallback can't be configured as \\\\?"proxy\\\\?""; the setting: discovery-fallback = "proxy" \\(flag --discovery-fallback in the command line of pid \\d+ on 127\\.0\\.0\\.1 \\(/proc\\)\\)`,
        ),
      );
    expect(err).toMatch(/nothing was stopped or changed/);
    expectNothingStopped(before);
  }, 300_000);

  it('the rule reads the flag from the command line too; --dry-run says the same and exits 1', async () => {
    const before = pids();
    for (const extra of [['--yes'], ['--dry-run']]) {
      const r = await opsctl('kv', 'upgrade', '--to', '3.6', ...extra, '--cluster', file, '--target-bin', `3.6=${dirs!.v36}`);
      const err = String(r.stderr);
      expect(r.exitCode, err).toBe(1);
      // the run's refusal names each member's words; a dry run's plan does (its refusal then names each rule once)
      const who = (name: string, rule: string) => (extra[0] === '--yes' ? `\\[${rule}\\] member ${name}: ` : `${name}(, \\w+)*: refuse: `);
      for (const m of c.members) {
        expect(err).toMatch(
          new RegExp(
            `${who(m.name, 'discovery-fallback-proxy')}flag --discovery-fallback in the command line of pid \\d+ on 127\\.0\\.0\\.1 \\(/proc\\): discovery-fallback proxy`,
          ),
        );
        expect(err).toMatch(new RegExp(`${who(m.name, 'trial-start')}etcd 3\\.6\\.\\d+ exited`));
      }
    }
    expectNothingStopped(before);
  }, 300_000);

  it('no binary for the hop: every member refused as not proven, naming --target-bin (the run and --dry-run alike)', async () => {
    const before = pids();
    for (const extra of [['--yes'], ['--dry-run']]) {
      const r = await opsctl('kv', 'upgrade', '--to', '3.6', ...extra, '--cluster', file);
      const err = String(r.stderr);
      expect(r.exitCode, err).toBe(1);
      if (extra[0] === '--yes')
        for (const m of c.members)
          expect(err).toMatch(
            new RegExp(`\\[trial-start\\] member ${m.name}: not proven: the path of the 3\\.6 binary on the hosts is not known \\(--target-bin 3\\.6=DIR`),
          );
      else {
        // the plan says each member's words (alike ones on one line); the refusal below it names the rule once
        expect(err).toMatch(/etcd1, etcd2, etcd3: not checked: the path of the 3\.6 binary on the hosts is not known \(--target-bin 3\.6=DIR/);
        expect(err).toMatch(/\[trial-start\] etcd1, etcd2, etcd3: not proven \(each above, with its fix\)/);
      }
      expect(err).toMatch(/--skip-trial etcd1,etcd2,etcd3 --skip-reason/);
    }
    expectNothingStopped(before);
  }, 300_000);

  it('a trial that cannot be skipped by --ignore-check; --skip-trial needs a reason and a member of the cluster', async () => {
    const ignore = await opsctl('kv', 'upgrade', '--to', '3.6', '--dry-run', '--cluster', file, '--ignore-check', 'trial-start');
    expect(ignore.exitCode).toBe(2);
    expect(String(ignore.stderr)).toMatch(/--ignore-check trial-start: the trials are the proof before every stop.*--skip-trial MEMBER --skip-reason/s);
    const noReason = await opsctl('kv', 'upgrade', '--to', '3.6', '--dry-run', '--cluster', file, '--skip-trial', 'etcd1');
    expect(noReason.exitCode).toBe(2);
    expect(String(noReason.stderr)).toMatch(/--skip-trial needs --skip-reason/);
    const unknown = await opsctl('kv', 'upgrade', '--to', '3.6', '--dry-run', '--cluster', file, '--skip-trial', 'etcd9', '--skip-reason', 'x');
    expect(unknown.exitCode).toBe(2);
    expect(String(unknown.stderr)).toMatch(/--skip-trial: no member is called etcd9.*etcd1, etcd2, etcd3/s);
  }, 120_000);
});
