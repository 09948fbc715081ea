import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { procStartTime } from '../../src/kv/drivers/member-procs.js';
import { reapClones } from '../../src/kv/rehearsal/clone.js';

const root = mkdtempSync(join(tmpdir(), 'opsctl-reap-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function copy(name: string, owner?: string): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'data', 'kv1'), { recursive: true });
  writeFileSync(join(dir, 'data', 'kv1', 'db'), 'x');
  if (owner !== undefined) writeFileSync(join(dir, 'owner'), owner);
  return dir;
}

describe.runIf(process.platform === 'linux')("a killed rehearsal's copy: removed by the next rehearsal, once its opsctl is gone", () => {
  it('removes the copies of processes gone (or whose pid now names another process); keeps a running one, one without an owner, and what is not a copy', async () => {
    // (past the kernel's largest PID: no process has it)
    const dead = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8')) + 1;
    const mine = copy('opsctl-rehearsal-live', `${process.pid} ${procStartTime(process.pid)}\n`);
    const killed = copy('opsctl-rehearsal-killed', `${dead} 12345\n`);
    const reused = copy('opsctl-rehearsal-reused', `${process.pid} 1\n`);
    const unowned = copy('opsctl-rehearsal-unowned');
    const other = copy('someone-else', `${dead} 1\n`);
    expect((await reapClones(root)).sort()).toEqual([killed, reused].sort());
    expect([mine, killed, reused, unowned, other].map((d) => existsSync(d))).toEqual([true, false, false, true, true]);
  });
});
