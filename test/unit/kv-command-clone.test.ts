import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { MemberSpec } from '../../src/kv/cluster/cluster-file.js';
import { CLONE_RECORD, findCommandClone, type CloneReach } from '../../src/kv/rehearsal/clone-find.js';
import { readCloneRecord } from '../../src/kv/rehearsal/command-clone.js';
import type { StartSettings } from '../../src/kv/drivers/start-settings.js';

const members: MemberSpec[] = [
  { name: 'kv1', endpoint: 'http://127.0.0.1:2379' },
  { name: 'kv2', endpoint: 'http://10.0.0.5:2379' },
];

const running = (m: MemberSpec): StartSettings & { exe: string; pid: number } => ({
  program: [''],
  exe: '/opt/etcd-3.5/etcd',
  pid: m.name === 'kv1' ? 4242 : 4343,
  args: [`--data-dir=/var/lib/${m.name}`, ...(m.name === 'kv2' ? ['--wal-dir=/wal/kv2'] : [])],
  env: { ETCD_NAME: m.name },
  cwd: '/srv',
  user: { uid: 996, gid: 996 },
  from: { args: 'the command line of pid 4242', env: 'the environment of pid 4242' },
});

const reach = (over: Partial<CloneReach> = {}): CloneReach => ({
  settings: true,
  here: () => true,
  running: async (m) => running(m),
  shell: async () => ({ stdout: '3.5.35\n', stderr: '', exitCode: 0 }),
  ...over,
});

describe("a command-driver cluster's clone", () => {
  it('is made of every member here: its PID paused, its data and WAL dirs copied, its record, the addresses beside loopback', async () => {
    const c = await findCommandClone(members, reach());
    if ('why' in c) throw new Error(c.why);
    expect(c.pause).toEqual([4242, 4343]);
    expect(c.outside).toEqual(['/var/lib/kv1', '/var/lib/kv2', '/wal/kv2']);
    expect(c.addresses).toEqual(['10.0.0.5/32']);
    expect(c.operatorCwd).toBe(true);
    const rec = JSON.parse(c.files![CLONE_RECORD]!) as { members: Array<{ name: string; version: string; exe: string; args: string[]; user: unknown }> };
    expect(rec.members.map((m) => [m.name, m.version, m.exe])).toEqual([
      ['kv1', '3.5', '/opt/etcd-3.5/etcd'],
      ['kv2', '3.5', '/opt/etcd-3.5/etcd'],
    ]);
    expect(rec.members[1]!.args).toEqual(['--data-dir=/var/lib/kv2', '--wal-dir=/wal/kv2']);
    expect(rec.members[0]!.user).toEqual({ uid: 996, gid: 996 });
  });

  it('is not made, with the reason, without a settings template, with a member elsewhere, or simulated members', async () => {
    expect(await findCommandClone(members, reach({ settings: false }))).toEqual({ why: expect.stringMatching(/a settings template prints it/) });
    expect(await findCommandClone(members, reach({ here: (m) => m.name === 'kv1' }))).toEqual({
      why: "kv2 runs on another host: a member's data is not copied off its host",
    });
    expect(
      await findCommandClone(
        members,
        reach({ running: async (m) => ({ ...running(m), capabilities: { etcdData: false, askVersion: false, what: 'simulated' } }) }),
      ),
    ).toEqual({
      why: 'simulated members keep no etcd data to rehearse on',
    });
    expect(await findCommandClone(members, reach({ running: async () => ({ why: 'no process listens on port 2379' }) }))).toEqual({
      why: 'kv1: no process listens on port 2379',
    });
    expect(await findCommandClone(members, reach({ shell: async () => ({ stdout: '', stderr: '', exitCode: 0 }) }))).toEqual({
      why: expect.stringMatching(/^kv1: \/opt\/etcd-3\.5\/etcd --version printed no "etcd Version:"/),
    });
  });

  it("the clone's run reads the record back, and refuses one of another shape naming the file", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'opsctl-clone-record-'));
    try {
      const c = await findCommandClone(members, reach());
      if ('why' in c) throw new Error(c.why);
      mkdirSync(join(dir, 'rehearsal'));
      writeFileSync(join(dir, CLONE_RECORD), c.files![CLONE_RECORD]!);
      expect((await readCloneRecord(dir)).map((m) => m.name)).toEqual(['kv1', 'kv2']);
      writeFileSync(join(dir, CLONE_RECORD), JSON.stringify({ members: [{ name: 'kv1', args: 'rm -rf /' }] }));
      await expect(readCloneRecord(dir)).rejects.toThrow(
        `the rehearsal's record of the clone's members ${join(dir, CLONE_RECORD)} is not the record of a clone's members`,
      );
      writeFileSync(join(dir, CLONE_RECORD), '{ not json');
      await expect(readCloneRecord(dir)).rejects.toThrow(/ is not JSON: /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
