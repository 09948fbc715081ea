import { describe, expect, it } from 'vitest';
import type { ClusterSpec } from '../../src/kv/cluster/cluster-file.js';
import type { MemberDriver } from '../../src/kv/drivers/driver.js';
import { settlePlan } from '../../src/kv/ladder/facts.js';
import { parseV2Size, v2SizeScript } from '../../src/kv/drivers/host-script.js';

/** What the plan says of --settle auto per hop: how the v2 size will be measured, or "not checked: why". */
const cluster = (driver?: ClusterSpec['driver']): ClusterSpec => ({
  source: 'file',
  key: 'k',
  members: [{ name: 'kv1', endpoint: 'http://10.0.0.1:2379' }],
  driver,
});
/** A command driver with no way onto the members' hosts (no trial template, not this host). */
const command = { type: 'command', measuresV2: () => false } as unknown as MemberDriver;
/** A command driver that reaches each member's host (a trial template, or the member runs here). */
const commandOnHosts = { type: 'command', measuresV2: () => true } as unknown as MemberDriver;
const local = { type: 'local' } as MemberDriver;
const hop = (from: string, to: string) => ({ from, to, patch: false });
const templates = { stop: 's', start: 's', running: 'r' };

describe('settlePlan: --settle auto on the plan, per hop', () => {
  it('a remote 3.4 → 3.5 hop with no v2-size template and no figure carried: not checked, and why; the guide’s 2 minutes', () => {
    const line = settlePlan({ settle: 'auto', driver: command, cluster: cluster({ type: 'command', ...templates }) }, hop('3.4', '3.5'), undefined);
    expect(line).toMatch(
      /^settle auto: v2 data size not checked: a 3\.4\+ member serves no v2 API unless enable-v2, .*no way there \(a trial template such as 'ssh {host} sudo sh -s', or driver\.v2Size.*2 minutes between members$/,
    );
  });

  it('a command driver that reaches the hosts: the newest v2 snapshot file on each host, never the guess', () => {
    const line = settlePlan({ settle: 'auto', driver: commandOnHosts, cluster: cluster({ type: 'command', ...templates }) }, hop('3.4', '3.5'), undefined);
    // (after the member's own v2 API: the host is reached only where the member cannot tell)
    expect(line).toMatch(
      /sized by each member's v2 key tree over its v2 API where enable-v2 is on, else each member's newest v2 snapshot file on its host \(else the v2 writes its WAL holds, v3 requests not counted\)$/,
    );
    expect(line).not.toMatch(/not checked/);
  });

  it('measured where it can be: the v2-size template, the figure carried from before 3.4, the data dir (snap, else WAL)', () => {
    const tpl = settlePlan(
      { settle: 'auto', driver: command, cluster: cluster({ type: 'command', ...templates, v2Size: 'ssh {host} du' }) },
      hop('3.4', '3.5'),
      undefined,
    );
    expect(tpl).toMatch(/sized by the v2-size template on each member's host/);
    const carried = settlePlan({ settle: 'auto', driver: command, cluster: cluster({ type: 'command', ...templates }) }, hop('3.4', '3.5'), {
      bytes: 1234,
      on: 'measured on kv1 (3.3.27) over its v2 API',
    });
    expect(carried).toMatch(/the 1234 bytes measured on kv1 \(3\.3\.27\)/);
    expect(settlePlan({ settle: 'auto', driver: local, cluster: cluster({ type: 'local' }) }, hop('3.4', '3.5'), undefined)).toMatch(
      /newest member\/snap\/\*\.snap, else its WAL's v2 writes/,
    );
    expect(settlePlan({ settle: 'auto', driver: command, cluster: cluster({ type: 'command', ...templates }) }, hop('3.2', '3.3'), undefined)).toMatch(
      /over its v2 API$/,
    );
  });

  it('3.6 keeps no v2 store; an explicit --settle is as asked', () => {
    expect(settlePlan({ settle: 'auto', driver: command, cluster: cluster() }, hop('3.5', '3.6'), undefined)).toBe(
      'settle auto: no wait (etcd 3.6 keeps no v2 store)',
    );
    expect(settlePlan({ settle: 5000, driver: command, cluster: cluster() }, hop('3.4', '3.5'), undefined)).toBe('settle 5000 ms between members, as asked');
  });
});

describe("the v2 size script's answer, read (it runs on the member's host: test/integration/kv-settle-auto.test.ts)", () => {
  it('the newest snapshot file, the WAL v2 writes, every WAL byte (no perl there), or why not', () => {
    expect(parseV2Size('opsctl-v2: snap 4096\n')).toEqual({ kind: 'snap', bytes: 4096 });
    expect(parseV2Size('noise\nopsctl-v2: wal 391 5 2\n')).toEqual({ kind: 'wal', bytes: 391, writes: 5, files: 2 });
    expect(parseV2Size('opsctl-v2: walall 104857600\n')).toEqual({ kind: 'walall', bytes: 104857600 });
    expect(parseV2Size('opsctl-v2: none no WAL file in /var/lib/etcd/member/wal\n')).toEqual({ kind: 'none', why: 'no WAL file in /var/lib/etcd/member/wal' });
    expect(parseV2Size('sh: 1: perl: Permission denied')).toEqual({
      kind: 'none',
      why: 'the v2 size script printed no result: sh: 1: perl: Permission denied',
    });
  });

  it('the script reads v2 entries only: v3 requests are never counted, and without perl it says so', () => {
    const s = v2SizeScript("/var/lib/etc'd", '/wal');
    expect(s).toContain("d='/var/lib/etc'\\''d'");
    expect(s).toContain("w='/wal'");
    expect(s).toMatch(/command -v perl/);
    expect(s).toMatch(/opsctl-v2: walall/);
    // (the perl program is one single-quoted word: the shell reads nothing of it)
    expect(s).toMatch(/perl -e 'use strict;/);
  });
});
