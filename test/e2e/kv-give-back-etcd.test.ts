import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KvClient } from '../../src/kv/cluster/client.js';
import { runBin } from '../helpers/bin.js';
import { crashReal } from '../helpers/crash-cluster.js';
import { crashRun } from '../helpers/crash-points.js';
import { etcdLadderDirs } from '../helpers/etcd-releases.js';
import { readJournal, until } from '../helpers/kv.js';

/**
 * Give back what was taken (issue 57, item 5), on real etcd through the command driver: opsctl is SIGKILLed
 * right after it stopped the first member of a 3.5.35 → 3.6.16 hop, then another member crashes on its own
 * (SIGKILL to its etcd, a PID this test's cluster started). One of three members is left: no quorum.
 * `kv rollback` starts the member the run stopped, on 3.5 (the version it last ran healthy), without waiting
 * for the crashed one (it used to wait 120 s for a healthy cluster and fail), never starts the crashed one (not
 * opsctl's), and says what remains for the operator with the command to look at it (exit 3). The upgrade's
 * resume (the identical command) does the same before it refuses.
 */
const dirs = etcdLadderDirs();
const FAST = ['--poll-interval', '50ms', '--settle', '0s'];

describe.runIf(Boolean(dirs))('give back what was taken: the member opsctl stopped, when another one crashed meanwhile (real 3.5.35 → 3.6.16)', () => {
  let s!: ReturnType<typeof crashReal>;
  beforeAll(async () => {
    s = crashReal({ '3.5': dirs!.v35, '3.6': dirs!.v36 }, '3.5', { writeEveryMs: 1000 });
    await s.reset();
  }, 300_000);
  afterAll(async () => {
    await s?.down();
  });
  const upgrade = () => ['kv', 'upgrade', '--to', '3.6', '--yes', '--cluster', s.file, '--target-bin', `3.6=${dirs!.v36}`, ...FAST];

  /** opsctl killed right after its first stop; then another member crashes: the one opsctl stopped and the one that crashed. */
  async function killedThenCrash(): Promise<{ stopped: string; crashed: string }> {
    const killed = await crashRun(upgrade(), { ...s.env, OPSCTL_CRASH_AT: '3.5→3.6 after stop * (changes)' });
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    const c = s.cluster();
    const stopped = /killed at 3\.5→3\.6 after stop (\S+) \(changes\)/.exec(killed.stderr)?.[1];
    expect(stopped, killed.stderr).toBeDefined();
    await until(() => !c.alive(c.members.find((m) => m.name === stopped)!), 60_000, `${stopped} gone`);
    const other = c.members.find((m) => m.name !== stopped)!;
    process.kill(c.pid(other)!, 'SIGKILL');
    await until(() => !c.alive(other), 60_000, `${other.name} gone`);
    return { stopped: stopped!, crashed: other.name };
  }

  it('kv rollback starts the member the run stopped on 3.5 without waiting for the crashed one, and leaves that one to the operator (exit 3)', async () => {
    const { stopped, crashed } = await killedThenCrash();
    const c = s.cluster();
    const dry = await runBin(['kv', 'rollback', '--dry-run', '--cluster', s.file], { env: { ...s.env, NO_COLOR: '1', CI: '1' } });
    expect(dry.exitCode, String(dry.stderr)).toBe(0);
    expect(String(dry.stdout)).toMatch(new RegExp(`1\\. ${stopped}: stop, start on 3\\.5\\b.*without waiting for ${crashed}\\)`));
    expect(String(dry.stdout)).not.toMatch(new RegExp(`\\d\\. ${crashed}:`));
    expect(String(dry.stdout)).toMatch(
      new RegExp(`left for you:\\n- ${crashed} does not answer .*not opsctl's to start.*look: opsctl kv endpoint health --cluster `),
    );

    const r = await runBin(['kv', 'rollback', '--cluster', s.file, ...FAST.slice(0, 2)], { env: { ...s.env, NO_COLOR: '1', CI: '1' }, timeout: 300_000 });
    const err = String(r.stderr);
    expect(r.exitCode, err).toBe(3);
    expect(err).toMatch(new RegExp(`${stopped}: back on 3\\.5, the version it last ran healthy \\(the upgrade stopped it\\); not waiting for ${crashed}`));
    expect(err).toMatch(
      new RegExp(
        `gave back ${stopped} → 3\\.5; the cluster is not whole: ${crashed} does not answer .*: opsctl did not stop it, so it is not opsctl's to start`,
      ),
    );
    expect(err).toMatch(/look: opsctl kv endpoint health --cluster /);
    expect(err).not.toMatch(/timed out|120 s/);
    const back = c.members.find((m) => m.name === stopped)!;
    expect(c.alive(back)).toBe(true);
    expect(c.alive(c.members.find((m) => m.name === crashed)!)).toBe(false);
    expect((await new KvClient(back.clientUrl, { session: s.session, timeoutMs: 5000 }).version()).server).toBe('3.5.35');
    expect(readJournal(s.dir).status).toBe('rolled-back');
    // the operator brings the crashed member back: the cluster is whole, on 3.5
    c.start(
      c.members.find((m) => m.name === crashed)!,
      '3.5',
    );
    await until(async () => (await runBin(['kv', 'health', '--cluster', s.file], { env: s.env })).exitCode === 0, 120_000, 'the cluster healthy again');
  }, 900_000);

  it('the identical kv upgrade gives the member back the same way before it refuses (exit 3), and finishes once the operator brought the other back', async () => {
    const { stopped, crashed } = await killedThenCrash();
    const c = s.cluster();
    const env = { ...s.env, NO_COLOR: '1', CI: '1' };
    const dry = await runBin([...upgrade(), '--dry-run'], { env, timeout: 300_000 });
    expect(dry.exitCode, String(dry.stderr)).toBe(1);
    expect(String(dry.stderr)).toMatch(new RegExp(`would start ${stopped} on 3\\.5, the version it last ran healthy \\(--dry-run: not started\\)`));
    expect(c.alive(c.members.find((m) => m.name === stopped)!)).toBe(false);

    const r = await runBin(upgrade(), { env, timeout: 300_000 });
    const err = String(r.stderr);
    expect(r.exitCode, err).toBe(3);
    expect(err).toMatch(
      new RegExp(
        `upgrade halted: a member the journal never stopped is down \\(${crashed}\\); gave back ${stopped}: started on 3\\.5, the version it last ran healthy`,
      ),
    );
    expect(err).toMatch(new RegExp(`${crashed} does not answer .*: opsctl did not stop it, so it is not opsctl's to start`));
    expect(err).not.toMatch(/refused before any change/);
    const back = c.members.find((m) => m.name === stopped)!;
    expect(c.alive(back)).toBe(true);
    expect(c.alive(c.members.find((m) => m.name === crashed)!)).toBe(false);
    expect((await new KvClient(back.clientUrl, { session: s.session, timeoutMs: 5000 }).version()).server).toBe('3.5.35');
    const j = readJournal(s.dir);
    expect(j.puttingBack).toBeUndefined();
    expect(
      j.steps.filter((x: { member?: string; kind: string }) => x.member === stopped && x.kind !== 'snapshot').map((x: { status: string }) => x.status),
    ).not.toContain('done');

    // the operator brings the crashed member back; the identical command resumes and finishes on 3.6
    c.start(
      c.members.find((m) => m.name === crashed)!,
      '3.5',
    );
    await until(async () => (await runBin(['kv', 'health', '--cluster', s.file], { env: s.env })).exitCode === 0, 120_000, 'the cluster healthy again');
    const done = await runBin(upgrade(), { env, timeout: 600_000 });
    expect(done.exitCode, String(done.stderr)).toBe(0);
    for (const m of c.members) expect((await new KvClient(m.clientUrl, { session: s.session, timeoutMs: 5000 }).version()).server).toBe('3.6.16');
  }, 1_200_000);
});
