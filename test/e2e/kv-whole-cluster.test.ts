import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { requireProgram } from '../helpers/e2e.js';
import { until } from '../helpers/kv.js';
import { startCluster, type KvSandbox } from '../framework/index.js';
import { PtySession, SCRIPT } from '../helpers/pty.js';

/**
 * kv upgrade counts the whole cluster, not the endpoints it was given (issue 17, part 1), through the
 * built binary on a simulated 3.2 sandbox: its members publish a member list as etcd does. Every
 * wait is for a state (a journal step, a health answer), with a deadline; nothing asserts speed.
 */
const FAST = ['--poll-interval', '50ms', '--healthy-timeout', '60s', '--stop-timeout', '30s'];
const KVCTL = new URL('../fixtures/kvctl.mjs', import.meta.url).pathname;
const tpl = (verb: string, extra = '') => `"${process.execPath}" ${KVCTL} ${verb} {name}${extra}`;
const DRIVER = ['--stop-cmd', tpl('stop'), '--start-cmd', tpl('start', ' {version}'), '--running-cmd', tpl('running'), '--no-backup'];

let sb: KvSandbox | undefined;
const sessions: PtySession[] = [];
afterEach(async () => {
  for (const s of sessions.splice(0)) s.kill();
  await sb?.down();
  sb = undefined;
});

async function sandbox(members = 3) {
  sb = (await startCluster({ members: 'simulated', size: members, version: '3.2' })).sandbox;
  return sb;
}
const pids = (s: NonNullable<typeof sb>) => s.spec().members.map((m) => (existsSync(m.pidFile) ? Number(readFileSync(m.pidFile, 'utf8')) : 0));
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};
const journalDir = (s: NonNullable<typeof sb>) => join(s.dir, 'data', 'kv', 'journals');

async function stopMember(s: NonNullable<typeof sb>, i: number) {
  const m = s.spec().members[i]!;
  const pid = Number(readFileSync(m.pidFile, 'utf8'));
  process.kill(pid, 'SIGTERM');
  await until(() => !alive(pid), 20_000, `${m.name} gone`);
  return m;
}

async function memberIds(s: NonNullable<typeof sb>) {
  const st = (await s.kv('status', '--json')).json<Array<{ name: string; id: string }>>();
  // kv status prints ids in hex; the upgrade gate's refusals name them in decimal
  return new Map(st.filter((x) => x.id).map((x) => [x.name, BigInt(`0x${x.id}`).toString()]));
}

describe('kv upgrade --endpoints naming part of the cluster (the built binary, a simulated sandbox)', () => {
  it("the issue's case: kv3 down, --endpoints kv1,kv2: refused (exit 1) naming kv3 (name, id, peer URL) and the fix; nothing stopped, no journal", async () => {
    const s = await sandbox();
    const ids = await memberIds(s);
    const [kv1, kv2] = s.spec().members;
    const kv3 = await stopMember(s, 2);
    const before = pids(s);
    const eps = `${kv1!.endpoint},${kv2!.endpoint}`;
    const peer = JSON.parse(readFileSync(join(s.dir, 'data', 'kv', 'sandbox', 'sandbox.json'), 'utf8')).members[2].peerUrl.replace(/\/$/, '');

    const dry = await runBin(['kv', 'upgrade', '--to', '3.3', '--dry-run', '--endpoints', eps], { env: s.env });
    expect(dry.exitCode, String(dry.stderr)).toBe(1);
    expect(dry.stdout).not.toMatch(/Plan:/);
    const why = new RegExp(
      `member ${kv3.name} \\(id ${ids.get(kv3.name)}, peer ${peer}\\) is in the cluster's member list \\(3 members, quorum 2\\) but was not given, and is down: .*fix: add ${kv3.endpoint} to --endpoints`,
    );
    expect(dry.stderr).toMatch(why);
    expect(dry.stderr).toMatch(/refused before any change/);

    // For real (--yes, a driver): the same refusal before any stop.
    const real = await runBin(['kv', 'upgrade', '--to', '3.3', '--yes', '--endpoints', eps, ...DRIVER, ...FAST], { env: s.env });
    expect(real.exitCode, String(real.stderr)).toBe(1);
    expect(real.stderr).toMatch(why);
    expect(pids(s)).toEqual(before);
    expect(before.slice(0, 2).every(alive)).toBe(true);
    expect(existsSync(journalDir(s)) && s.journal()).toBeFalsy();
    const v = (await s.kv('version', '--json')).json<Array<{ server: string }>>();
    expect(v.filter((x) => x.server).every((x) => x.server.startsWith('3.2'))).toBe(true);
  });

  it('a healthy member left out is refused too (it would not be counted), naming it as up and healthy', async () => {
    const s = await sandbox();
    const [kv1, kv2, kv3] = s.spec().members;
    const r = await runBin(['kv', 'upgrade', '--to', '3.3', '--dry-run', '--endpoints', `${kv1!.endpoint},${kv2!.endpoint}`], { env: s.env });
    expect(r.exitCode, String(r.stderr)).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`member ${kv3!.name} \\(id \\d+, peer http://127\\.0\\.0\\.1:\\d+\\) .*is up and healthy at ${kv3!.endpoint}`));
    // Every member named: the whole cluster is counted (and, with no driver to reach the members, nothing is proven: exit 1, naming that).
    const all = await runBin(
      [
        'kv',
        'upgrade',
        '--to',
        '3.3',
        '--dry-run',
        '--endpoints',
        s
          .spec()
          .members.map((m) => m.endpoint)
          .join(','),
      ],
      { env: s.env },
    );
    expect(all.exitCode, String(all.stderr)).toBe(1);
    expect(all.stderr).not.toMatch(/is in the cluster's member list/);
    expect(all.stderr).toMatch(/kv1, kv2, kv3: not checked: no driver/);
    expect(all.stderr).toMatch(/\[trial-start\] kv1, kv2, kv3: not proven \(each above, with its fix\)/);
    // (the dry run's plan shows each finding once, the members alike on one line, before the refusal names each)
    expect(all.stderr).toMatch(/\[trial-start\] the hop's etcd starts[^\n]*\n\s+kv1, kv2, kv3: not checked: no driver/);
  });

  it('a member that goes down after pre-flight halts the run before the next stop (exit 3): never two down', async () => {
    const s = await sandbox();
    const before = pids(s);
    const run = runBin(['kv', 'upgrade', '--to', '3.3', '--yes', ...FAST, '--settle', '15s', '--json'], { env: s.env });
    // The first member is back on 3.3 and settling: take down a member that still runs 3.2.
    const first = await until(
      () => s.journal()?.steps.find((x: any) => x.kind === 'settle' && x.status === 'running')?.member as string | undefined,
      60_000,
      'the first settle',
    );
    const order: string[] = s
      .journal()
      .steps.filter((x: any) => x.kind === 'stop')
      .map((x: any) => x.member);
    const next = order[1];
    const victimIndex = s.spec().members.findIndex((m) => m.name !== first && m.name !== next);
    const victim = await stopMember(s, victimIndex);
    const r = await run;
    expect(r.exitCode, String(r.stderr)).toBe(3);
    expect(r.stderr).toMatch(new RegExp(`not stopping ${next}: ${victim.name} is not healthy .*; ${next} was not touched`));
    const j = s.journal();
    expect(j.status).toBe('halted');
    expect(j.steps.filter((x: any) => x.member === next).every((x: any) => x.status === 'pending')).toBe(true);
    // The next member is the same process it was before the run; the first is back; only the victim is down.
    const nextIndex = s.spec().members.findIndex((m) => m.name === next);
    expect(pids(s)[nextIndex]).toBe(before[nextIndex]);
    expect(alive(pids(s)[nextIndex]!)).toBe(true);
    const firstIndex = s.spec().members.findIndex((m) => m.name === first);
    expect(alive(pids(s)[firstIndex]!)).toBe(true);
    expect(
      s
        .spec()
        .members.map((_, i) => alive(pids(s)[i]!))
        .filter((x) => !x),
    ).toHaveLength(1);
  });

  it('a data dir holding v2 data (member/wal) but no v3 database is refused before anything starts, naming the directory', async () => {
    const s = await sandbox();
    const m = s.spec().members[1]!;
    mkdirSync(join(m.dataDir, 'member', 'wal'), { recursive: true });
    const before = pids(s);
    const r = await runBin(['kv', 'upgrade', '--to', '3.3', '--yes', ...FAST], { env: s.env });
    expect(r.exitCode, String(r.stderr)).toBe(1);
    expect(r.stderr).toContain(
      `member ${m.name}: ${m.dataDir} holds v2 data (member/wal) but no v3 database (member/snap/db is missing): 3.3 would panic at start`,
    );
    expect(pids(s)).toEqual(before);
    expect(s.journal()).toBeUndefined();

    // The command driver looks where its data-dir template says (on this machine: no --on-host).
    const template = join(m.dataDir, '..', '..', '{name}', 'data');
    expect(join(m.dataDir, '..', '..', m.name, 'data')).toBe(m.dataDir);
    const eps = s
      .spec()
      .members.map((x) => x.endpoint)
      .join(',');
    const cmd = await runBin(['kv', 'upgrade', '--to', '3.3', '--yes', '--endpoints', eps, ...DRIVER, '--data-dir', template, ...FAST], { env: s.env });
    expect(cmd.exitCode, String(cmd.stderr)).toBe(1);
    expect(cmd.stderr).toContain(`member ${m.name}: ${m.dataDir} holds v2 data (member/wal) but no v3 database`);
    // A template that names no member's data dir is refused, naming the directory and the fix.
    const wrong = await runBin(['kv', 'upgrade', '--to', '3.3', '--dry-run', '--endpoints', eps, ...DRIVER, '--data-dir', '/nonexistent/{name}'], {
      env: s.env,
    });
    expect(wrong.exitCode, String(wrong.stderr)).toBe(1);
    expect(wrong.stderr).toMatch(/kv\d: refuse: its data dir \/nonexistent\/kv\d has no member\/ directory: .*fix the data-dir template/);
    expect(pids(s)).toEqual(before);
    expect(s.journal()).toBeUndefined();
  });
});

describe('kv upgrade asks before the first stop', () => {
  it('a 2-member cluster: the plan says every restart loses quorum; off a terminal without --yes: exit 2 naming --yes, nothing changed', async () => {
    const s = await sandbox(2);
    const dry = await runBin(['kv', 'upgrade', '--to', '3.3', '--dry-run'], { env: s.env });
    expect(dry.exitCode, String(dry.stderr)).toBe(0);
    expect(dry.stdout).toMatch(/! this cluster has 2 members: every restart loses quorum/);
    const before = pids(s);
    const r = await runBin(['kv', 'upgrade', '--to', '3.3', ...FAST], { env: s.env });
    expect(r.exitCode, String(r.stderr)).toBe(2);
    expect(r.stderr).toMatch(/kv upgrade needs confirmation before it stops a member, and (standard input is not a terminal to ask on|CI is set)/);
    expect(r.stderr).toMatch(/pass --yes/);
    expect(r.stderr).toMatch(/every restart loses quorum/);
    expect(pids(s)).toEqual(before);
    expect(s.journal()).toBeUndefined();
  });

  describe.runIf(requireProgram('script (util-linux, for the pty tests)', SCRIPT))('on a real terminal', () => {
    const pty = (args: string[], env: NodeJS.ProcessEnv) => {
      const p = PtySession.opsctl(args, { env });
      sessions.push(p);
      return p;
    };
    it('shows the plan and asks (default no): "n" exits 5 with "nothing changed", nothing stopped, no journal', async () => {
      const s = await sandbox(2);
      const before = pids(s);
      const p = pty(['kv', 'upgrade', '--to', '3.3', ...FAST], s.env);
      await p.waitFor(/Upgrade the cluster to 3\.3: stop and restart 2 members, one at a time\?/);
      expect(p.text).toMatch(/Plan: upgrade 3\.2 → 3\.3/);
      expect(p.text).toMatch(/every restart loses quorum/);
      p.type('n\r');
      expect(await p.exitCode()).toBe(5);
      expect(p.text).toMatch(/nothing changed/);
      expect(pids(s)).toEqual(before);
      expect(s.journal()).toBeUndefined();
    });
    it('Ctrl-C at the question exits 130, nothing stopped, no journal', async () => {
      const s = await sandbox(2);
      const before = pids(s);
      const p = pty(['kv', 'upgrade', '--to', '3.3', ...FAST], s.env);
      await p.waitFor(/one at a time\?/);
      p.ctrlC();
      expect(await p.exitCode()).toBe(130);
      expect(pids(s)).toEqual(before);
      expect(s.journal()).toBeUndefined();
    });
  });
});
