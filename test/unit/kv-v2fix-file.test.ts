import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readV2Fix } from '../../src/kv/v2fix/v2store-fix-file.js';

/**
 * The v2store fix's journal on disk (issue 44: one member-cycle operation, journalled alike): a file an
 * older opsctl wrote (version 1, one phase per member) is read into the cycles' steps, so a fix killed
 * before the upgrade of opsctl resumes where it was; a file that cannot be used is refused naming it and
 * the way out, never taken for "no fix" (which would start another fix over a half-done one).
 */
describe('the v2store fix journal', () => {
  const dir = mkdtempSync(join(tmpdir(), 'opsctl-v2fix-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, body: unknown) => {
    const file = join(dir, name);
    writeFileSync(file, typeof body === 'string' ? body : JSON.stringify(body));
    return file;
  };
  const v1 = (phases: Record<string, string>) => ({
    version: 1,
    kind: 'v2store-fix',
    id: 'fix-1',
    cluster: 'abc',
    status: 'interrupted',
    createdAt: '2026-11-26T10:00:00Z',
    updatedAt: '2026-11-26T10:01:00Z',
    owner: { pid: 1, host: 'h' },
    members: Object.entries(phases).map(([name, phase]) => ({ name, phase, log: [] })),
    snapshots: [],
    round: 1,
    checks: [],
  });

  it('no file: no fix', () => {
    expect(readV2Fix(join(dir, 'none.json'))).toBeUndefined();
  });

  it("an older opsctl's file: each member's phase becomes its steps done, the rest pending; the minor from the file's name", () => {
    const j = readV2Fix(write('k.v2store-fix-3.6.json', v1({ kv1: 'done', kv2: 'up-fix', kv3: 'pending' })))!;
    expect(j.version).toBe(2);
    expect([j.source, j.target]).toEqual(['3.6', '3.6']);
    const of = (m: string) => j.steps.filter((s) => s.member === m);
    expect(of('kv1').every((s) => s.status === 'done')).toBe(true);
    // up-fix was written before the start with the fix's settings: stopped, gone, copied; the start is next
    expect(of('kv2').map((s) => `${s.id}:${s.status}`)).toEqual([
      'r1-fix/kv2/snapshot:done',
      'r1-fix/kv2/stop:done',
      'r1-fix/kv2/wait-stopped:done',
      'r1-fix/kv2/backup-data:done',
      'r1-fix/kv2/start:pending',
      'r1-fix/kv2/wait-healthy:pending',
      'r1-back/kv2/stop:pending',
      'r1-back/kv2/wait-stopped:pending',
      'r1-back/kv2/start:pending',
      'r1-back/kv2/wait-healthy:pending',
    ]);
    expect(of('kv3').every((s) => s.status === 'pending')).toBe(true);
    expect(j.members.every((m) => !('phase' in m))).toBe(true);
  });

  it('refuses, naming the file and the way out: truncated JSON, another kind, an unknown version, an unknown phase, a step of no member', () => {
    const cases: Array<[string, unknown, RegExp]> = [
      ['torn.json', '{"version": 2, "kind": "v2sto', /not JSON \(truncated\?\)/],
      ['kind.json', { version: 2, kind: 'upgrade', id: 'x', members: [] }, /not a v2store fix journal/],
      ['ver.json', { ...v1({ kv1: 'done' }), version: 3, steps: [] }, /version 3 of the v2store fix journal is not one this opsctl reads/],
      ['phase.json', v1({ kv1: 'halfway' }), /member kv1 is in phase "halfway", which no opsctl wrote/],
      [
        'stray.json',
        { ...v1({ kv1: 'done' }), version: 2, steps: [{ id: 'r1-fix/kv9/stop', member: 'kv9', kind: 'stop', status: 'done' }] },
        /step r1-fix\/kv9\/stop names member "kv9", which is not one of the fix's members/,
      ],
    ];
    for (const [name, body, why] of cases) {
      const file = write(name, body);
      let err: (Error & { hint?: string; exitCode?: number }) | undefined;
      try {
        readV2Fix(file);
      } catch (e) {
        err = e as typeof err;
      }
      expect(err?.message, name).toMatch(why);
      expect(err?.message, name).toContain(file);
      expect(err?.hint, name).toContain(`mv ${file} ${file}.bad`);
    }
  });
});
