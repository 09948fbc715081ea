import { appendFileSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { afterAll, afterEach, beforeEach, expect } from 'vitest';

/**
 * Where the CPU goes, per test file (a setupFiles entry, on only when OPSCTL_TEST_CPU names a file: see
 * vitest.config.ts). Each file's worker moves itself into a cpuacct cgroup of its own (a child of the one it is
 * in, so the parent still counts it), which every process it starts inherits: etcd, the built binary, sh, ssh,
 * and the daemons that detach (setsid and reparenting leave the cgroup as it was). After the file's tests one
 * JSON line is appended: the cgroup's CPU (`cg`), the worker's own while the file ran (`self`), its waited-for children's
 * (`children`, /proc/self/stat cutime+cstime: what a machine without cgroups would see) and the wall time, all
 * in seconds, and `left`: the processes still in the cgroup when the worker moved out (a leak). With a cgroup,
 * `tests` holds each test's own CPU (its body and its beforeEach/afterEach, every process it started: what to cut
 * in a costly file); the rest of `cg` is the file's import, its beforeAll/afterAll and what outlived a test.
 */
const out = process.env.OPSCTL_TEST_CPU;
const tick = 100; // USER_HZ: /proc/<pid>/stat's clock ticks per second on Linux

function procStat(): { utime: number; stime: number; cutime: number; cstime: number } {
  // Fields after the command name (which may contain spaces) start at field 3.
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const n = (i: number) => Number(f[i - 3]) / tick;
  return { utime: n(14), stime: n(15), cutime: n(16), cstime: n(17) };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function cpuacctRoot(): string | undefined {
  const line = readFileSync('/proc/self/cgroup', 'utf8')
    .split('\n')
    .find((l) => /^\d+:([^:]*,)?cpuacct(,[^:]*)?:/.test(l));
  if (!line) return undefined;
  const path = line.slice(line.lastIndexOf(':') + 1);
  return `/sys/fs/cgroup/cpuacct${path === '/' ? '' : path}`;
}

if (out) {
  const started = Date.now();
  const before = procStat();
  const selfBefore = process.cpuUsage(); // (a worker may run several files: the unit tier's isolate: false)
  const parent = cpuacctRoot();
  let group: string | undefined;
  if (parent) {
    try {
      group = `${parent}/opsctl-test-${process.pid}-${started}`;
      mkdirSync(group);
      writeFileSync(`${group}/cgroup.procs`, String(process.pid));
    } catch {
      group = undefined; // no cgroup (not root, cgroup v2 only): the /proc figures still tell
    }
  }
  const tests: Array<[string, number]> = [];
  let testStart = 0;
  const usage = () => (group ? Number(readFileSync(`${group}/cpuacct.usage`, 'utf8')) / 1e9 : 0);
  if (group) {
    beforeEach(() => {
      testStart = usage();
    });
    afterEach((ctx) => {
      tests.push([ctx.task.name, Math.round((usage() - testStart) * 10) / 10]);
    });
  }
  afterAll(() => {
    const now = procStat();
    const self = process.cpuUsage(selfBefore);
    const line: Record<string, unknown> = {
      file: relative(process.cwd(), expect.getState().testPath ?? '?'),
      pid: process.pid,
      wall: (Date.now() - started) / 1000,
      self: (self.user + self.system) / 1e6,
      children: now.cutime + now.cstime - before.cutime - before.cstime,
    };
    if (group && parent) {
      line.tests = tests;
      try {
        measureGroup(line, group, parent);
      } catch (err) {
        line.cgError = (err as Error).message; // a measurement never fails the file it measures
      }
    }
    appendFileSync(out, `${JSON.stringify(line)}\n`);
  });
}

/** The file's cgroup CPU, then the worker moved back out and the groups no longer in use removed. */
function measureGroup(line: Record<string, unknown>, group: string, parent: string): void {
  line.cg = Number(readFileSync(`${group}/cpuacct.usage`, 'utf8')) / 1e9;
  writeFileSync(`${parent}/cgroup.procs`, String(process.pid));
  const left = readFileSync(`${group}/cgroup.procs`, 'utf8').split('\n').filter(Boolean);
  line.left = left.length;
  // this file's group, and those of earlier files whose workers have ended (a worker of a file running
  // meanwhile is alive); a group with a process still in it stays (EBUSY)
  for (const d of readdirSync(parent)) {
    const worker = /^opsctl-test-(\d+)-/.exec(d)?.[1];
    if (!worker || (`${parent}/${d}` !== group && alive(Number(worker)))) continue;
    try {
      rmdirSync(`${parent}/${d}`);
    } catch {
      // still in use
    }
  }
}
