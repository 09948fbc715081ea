import { execa } from 'execa';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, PAUSED } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { startCluster, type SimulatedTestCluster } from '../framework/index.js';
import { etcdReleaseDirs } from '../helpers/etcd-releases.js';
import { until } from '../helpers/kv.js';

/**
 * No orphan: opsctl SIGKILLed anywhere in a local member's start window (between the intent record,
 * the spawn and the PID record) never leaves a member process nothing finds. After each kill, `kv
 * sandbox down`, the upgrade's resume and `kv rollback` find the member by its data dir and ports,
 * name it and stop or adopt it: afterwards no process names a member's data dir or config file
 * besides the member itself, and a stopped sandbox's ports are free. The built binary; the kill
 * points come from a sweep of delays after the start window opens (simulated members) and from
 * the test fixture that stops opsctl at the local driver's start points (test/fixtures/opsctl-paused.cjs:
 * the built binary with a debug sink that blocks) exactly in each gap (simulated members and real etcd 3.2.32 → 3.3.27).
 */

interface Member {
  name: string;
  endpoint: string;
  peerUrl: string;
  dataDir: string;
  configFile: string;
  pidFile: string;
}

const releases = etcdReleaseDirs();

/** Processes (found independently of opsctl's code: a plain /proc scan) whose argv names the member's data dir or config file. */
function holders(m: Member): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    let argv: string[];
    let stat: string;
    try {
      argv = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      stat = readFileSync(`/proc/${d}/stat`, 'utf8');
    } catch {
      continue;
    }
    if (/\) [ZX] /.test(stat)) continue;
    if (argv.some((a) => a === m.configFile || a === m.dataDir || a.endsWith(`=${m.dataDir}`))) out.push(Number(d));
  }
  return out;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((res) => {
    const srv = createServer();
    srv.once('error', () => res(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => res(true)));
  });
}

const portsOf = (m: Member) => [m.endpoint, m.peerUrl].map((u) => Number(new URL(u).port));

/** A sandbox's own config dir, with the built binary. */
function box(prefix: string) {
  const cfg = tempConfigDir(prefix);
  const env = { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1' };
  const sandboxFile = join(cfg.dir, 'data', 'kv', 'sandbox', 'sandbox.json');
  return {
    cfg,
    opsctl: (...args: string[]) => execa(process.execPath, [BIN, ...args], { reject: false, env, extendEnv: true, timeout: 240_000 }),
    members: (): Member[] => (existsSync(sandboxFile) ? (JSON.parse(readFileSync(sandboxFile, 'utf8')) as { members: Member[] }).members : []),
    /** opsctl with a start hook; `marked` resolves when the hook printed its line (false: opsctl ended first). */
    hooked(hook: string, ...args: string[]) {
      const child = execa(process.execPath, [PAUSED, ...args], {
        reject: false,
        env: { ...env, OPSCTL_PAUSE: hook },
        extendEnv: true,
        timeout: 240_000,
      });
      let err = '';
      const marked = new Promise<boolean>((res) => {
        child.stderr?.on('data', (b: Buffer) => {
          err += String(b);
          if (/opsctl-test: \S+ \S+/.test(err)) res(true);
        });
        void child.then(() => res(false));
      });
      return { child, marked, stderr: () => err };
    },
  };
}

/** No process names any member's data dir or config file, and every member port is free. */
async function expectNoOrphan(members: Member[], what: string): Promise<void> {
  for (const m of members) {
    expect(holders(m), `${what}: a process still holds ${m.name}'s data dir`).toEqual([]);
    for (const p of portsOf(m)) await until(() => portFree(p), 30_000, `${what}: ${m.name}'s port ${p} free`);
  }
}

/** Each member held by exactly one process: the one its PID file names. */
function expectOneProcessEach(members: Member[], what: string): void {
  for (const m of members) {
    const pid = Number(readFileSync(m.pidFile, 'utf8').trim());
    expect(holders(m), `${what}: ${m.name}`).toEqual([pid]);
  }
}

function recordState(m: Member): 'no record' | 'intent, nothing spawned' | 'spawned, not recorded' | 'recorded' {
  const file = join(resolve(m.pidFile, '..'), `${m.name}.proc.json`);
  if (!existsSync(file)) return 'no record';
  const rec = JSON.parse(readFileSync(file, 'utf8')) as { state: string };
  if (rec.state === 'started') return 'recorded';
  return holders(m).length ? 'spawned, not recorded' : 'intent, nothing spawned';
}

describe('kv sandbox up SIGKILLed across the start window (simulated members, the built binary)', () => {
  const b = box('opsctl-orphan-sweep-');
  afterAll(async () => {
    await b.opsctl('kv', 'sandbox', 'down');
    b.cfg.cleanup();
  }, 300_000);

  it('a kill at 30 delays from 0 to 120 ms after the start begins: kv sandbox down stops whatever was started, names what its PID file did not, ports free', async () => {
    const seen = new Map<string, number>();
    // Every 2 ms up to 40 ms (where the spawn lands on a quiet machine), then every 8 ms up to 120 ms (a loaded one). Each
    // gap between the intent, the spawn and the PID record is also hit exactly by the paused-fixture tests of this file; this sweep is
    // what a timer-driven kill does (60 delays until 2026-11-26: the same states landed, at twice the CI time).
    const delays = [...Array.from({ length: 20 }, (_, i) => 2 * i), ...Array.from({ length: 10 }, (_, i) => 40 + 8 * i)];
    for (const delay of delays) {
      const up = b.hooked('mark', 'kv', 'sandbox', 'up', '--members', '1', '--timeout', '120s');
      const marked = await up.marked;
      expect(marked, `opsctl ended before the start began: ${up.stderr()}`).toBe(true);
      // A measured delay after the start window opened, then SIGKILL (a busy loop: a timer's own lateness is the sweep's noise).
      const t0 = performance.now();
      while (performance.now() - t0 < delay) {
        // spin
      }
      up.child.kill('SIGKILL');
      await up.child;
      const members = b.members();
      const [m] = members;
      expect(m).toBeDefined();
      const state = recordState(m!);
      seen.set(state, (seen.get(state) ?? 0) + 1);
      const orphan = holders(m!);
      const down = await b.opsctl('kv', 'sandbox', 'down');
      expect(down.exitCode, `delay ${delay} ms (${state}): ${down.stderr}`).toBe(0);
      if (state === 'spawned, not recorded') for (const pid of orphan) expect(String(down.stderr)).toContain(`pid ${pid} `);
      await expectNoOrphan(members, `delay ${delay} ms (${state})`);
    }
    process.stderr.write(`[kv orphan sweep] ${delays.length} kill points, where they landed: ${JSON.stringify(Object.fromEntries(seen))}\n`);
  }, 900_000);

  it.each(['before-intent', 'after-intent', 'after-spawn', 'after-record'])(
    'a kill paused exactly at %s: kv sandbox status sees the member when it was spawned, kv sandbox down leaves nothing',
    async (point) => {
      const up = b.hooked(`pause:${point}:kv2`, 'kv', 'sandbox', 'up', '--members', '2', '--timeout', '120s');
      expect(await up.marked, up.stderr()).toBe(true);
      up.child.kill('SIGKILL');
      await up.child;
      const members = b.members();
      const kv2 = members.find((m) => m.name === 'kv2')!;
      const spawned = point === 'after-spawn' || point === 'after-record';
      // The hook blocks the whole process: kv1 may or may not have been spawned before kv2 paused.
      expect(holders(kv2).length, `${point}: kv2's process`).toBe(spawned ? 1 : 0);
      const status = await b.opsctl('kv', 'sandbox', 'status', '--json');
      const rows = JSON.parse(String(status.stdout)) as Array<{ name: string; running: boolean; pid: number | null }>;
      expect(rows.find((r) => r.name === 'kv2')).toMatchObject({ running: spawned, ...(spawned ? { pid: holders(kv2)[0] } : {}) });
      const down = await b.opsctl('kv', 'sandbox', 'down');
      expect(down.exitCode, String(down.stderr)).toBe(0);
      await expectNoOrphan(members, point);
    },
    240_000,
  );
});

describe('kv upgrade SIGKILLed in a member start, then resumed (simulated members, the built binary)', () => {
  it.each(['after-intent', 'after-spawn', 'after-record'])(
    'paused %s: the resume finds the member, finishes healthy on 3.3 with one process per member',
    async (point) => {
      const b = box('opsctl-orphan-resume-');
      let c: SimulatedTestCluster | undefined;
      try {
        // (the sandbox this test upgrades, in the box's config dir: the simulator's own 100 ms heartbeat)
        c = await startCluster({ members: 'simulated', size: 3, version: '3.2', configDir: b.cfg.dir, extra: ['--heartbeat', '100ms', '--timeout', '120s'] });
        const FAST = ['--settle', '0s', '--poll-interval', '100ms'];
        const run = b.hooked(`pause:${point}`, 'kv', 'upgrade', '--to', '3.3', '--yes', ...FAST);
        expect(await run.marked, run.stderr()).toBe(true);
        run.child.kill('SIGKILL');
        await run.child;
        const resume = await b.opsctl('kv', 'upgrade', '--to', '3.3', '--yes', ...FAST);
        expect(resume.exitCode, String(resume.stderr)).toBe(0);
        if (point === 'after-spawn') expect(String(resume.stderr)).toMatch(/its PID file did not name it \(a start cut short before its record\)/);
        const v = JSON.parse(String((await b.opsctl('kv', 'version', '--json')).stdout)) as Array<{ server: string }>;
        expect(v.map((x) => x.server.slice(0, 3))).toEqual(['3.3', '3.3', '3.3']);
        expectOneProcessEach(b.members(), point);
        const members = b.members();
        const down = await b.opsctl('kv', 'sandbox', 'down');
        expect(down.exitCode, String(down.stderr)).toBe(0);
        await expectNoOrphan(members, point);
      } finally {
        await c?.destroy();
        b.cfg.cleanup();
      }
    },
    300_000,
  );
});

describe.runIf(releases)('real etcd 3.2.32 → 3.3.27: opsctl SIGKILLed right after spawning a member (the built binary)', () => {
  const b = box('opsctl-orphan-etcd-');
  const WAITS = ['--poll-interval', '100ms', '--healthy-timeout', '90s', '--stop-timeout', '30s'];
  const FAST = ['--settle', '0s', ...WAITS];
  const servers = async () => (JSON.parse(String((await b.opsctl('kv', 'version', '--json')).stdout)) as Array<{ server: string }>).map((x) => x.server);
  afterAll(async () => {
    const members = b.members();
    await b.opsctl('kv', 'sandbox', 'down');
    for (const m of members) expect(holders(m)).toEqual([]);
    b.cfg.cleanup();
  }, 300_000);

  it('kv rollback stops the unrecorded 3.3.27 (named) and brings the member back on 3.2.32; a second kill is resumed to 3.3.27; kv sandbox down leaves no process and free ports', async () => {
    // (the sandbox of real etcd this test upgrades, in the box's config dir)
    await startCluster({ members: 'simulated', size: 3, etcdBin: releases!.v32, configDir: b.cfg.dir, extra: ['--timeout', '120s'] });

    const first = b.hooked('pause:after-spawn', 'kv', 'upgrade', '--to', '3.3', '--yes', '--target-bin', releases!.v33, ...FAST);
    expect(await first.marked, first.stderr()).toBe(true);
    const who = /opsctl-test: (\S+) after-spawn/.exec(first.stderr())![1]!;
    first.child.kill('SIGKILL');
    await first.child;
    const m = b.members().find((x) => x.name === who)!;
    const [orphan] = holders(m);
    expect(orphan, `${who}'s new etcd`).toBeDefined();
    expect(readFileSync(m.pidFile, 'utf8').trim()).not.toBe(String(orphan)); // the PID file still names the old process

    const rb = await b.opsctl('kv', 'rollback', ...WAITS);
    expect(rb.exitCode, String(rb.stderr)).toBe(0);
    expect(String(rb.stderr)).toContain(`pid ${orphan} `);
    expect(await servers()).toEqual(['3.2.32', '3.2.32', '3.2.32']);
    expectOneProcessEach(b.members(), 'after the roll-back');
    expect(holders(m)).not.toContain(orphan);

    const second = b.hooked('pause:after-spawn', 'kv', 'upgrade', '--to', '3.3', '--yes', '--target-bin', releases!.v33, ...FAST);
    expect(await second.marked, second.stderr()).toBe(true);
    second.child.kill('SIGKILL');
    await second.child;
    const resume = await b.opsctl('kv', 'upgrade', '--to', '3.3', '--yes', '--target-bin', releases!.v33, ...FAST);
    expect(resume.exitCode, String(resume.stderr)).toBe(0);
    expect(await servers()).toEqual(['3.3.27', '3.3.27', '3.3.27']);
    expectOneProcessEach(b.members(), 'after the resume');

    const members = b.members();
    const down = await b.opsctl('kv', 'sandbox', 'down');
    expect(down.exitCode, String(down.stderr)).toBe(0);
    await expectNoOrphan(members, 'after kv sandbox down');
  }, 600_000);
});
