import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startCluster, type KvSandbox } from '../framework/index.js';

/**
 * Consistency, not only liveness, on simulated members: every member's KV hash (HashKV) at one
 * revision is compared before the first stop and after each member is back; a member off the
 * others' hash halts the run (exit 3) naming it and both hashes; 3.2 members are "not checked".
 */
const FAST = ['--poll-interval', '50ms', '--healthy-timeout', '30s', '--stop-timeout', '20s', '--settle', '0s'];

let sb: KvSandbox | undefined;
afterEach(async () => {
  await sb?.down();
  sb = undefined;
});

async function up(version: string) {
  sb = (await startCluster({ members: 'simulated', size: 3, version: version })).sandbox;
  for (let i = 0; i < 5; i++) expect((await sb.kv('put', `h/${i}`, `v${i}`)).code).toBe(0);
  return sb;
}

/** CONDITIONS.json of one member only. */
function faultOn(s: KvSandbox, name: string, f: object) {
  const m = s.spec().members.find((x) => x.name === name)!;
  writeFileSync(join(m.dataDir, 'CONDITIONS.json'), JSON.stringify(f));
}

async function servers(s: KvSandbox) {
  return (await s.kv('version', '--json')).json<Array<{ name: string; server: string }>>().map((v) => `${v.name}:${v.server}`);
}

describe('kv upgrade: KV hashes compared (HashKV)', () => {
  it('the hashes agree: compared before the first stop and after each member, kept in the report; the plan says so', async () => {
    const s = await up('3.3');
    const dry = await s.kv('upgrade', '--to', '3.4', '--dry-run');
    expect(dry.stdout + dry.stderr).toMatch(
      /consistency: every member's KV hash at one revision \(HashKV\) compared before the first stop and after each member/,
    );
    const r = await s.kv('upgrade', '--to', '3.4', '--yes', ...FAST, '--json');
    expect(r.code, r.stderr).toBe(0);
    const rep = r.json();
    expect(rep.consistency.map((c: any) => `${c.at.replace(/ is back on 3\.4/, '')}:${c.result}`)).toEqual([
      'before the first stop:ok',
      ...rep.plan.map((m: any) => `after ${m.name}:ok`),
    ]);
    expect(rep.consistency[0].hashes).toHaveLength(3);
    expect(new Set(rep.consistency[0].hashes.map((h: any) => h.hash)).size).toBe(1);
    expect(r.stderr).toMatch(/KV hashes compared before the first stop/);
  }, 180_000);

  it('a member off the others before the first stop: halted (exit 3) naming it and both hashes; nothing stopped', async () => {
    const s = await up('3.3');
    faultOn(s, 'kv2', { divergent: true });
    const before = await servers(s);
    const r = await s.kv('upgrade', '--to', '3.4', '--yes', ...FAST, '--json');
    expect(r.code, r.stderr).toBe(3);
    const rep = r.json();
    expect(rep.status).toBe('halted');
    const c = rep.consistency[0];
    const off = c.hashes.find((h: any) => h.member === 'kv2').hash;
    const good = c.hashes.find((h: any) => h.member === 'kv1').hash;
    expect(off).not.toBe(good);
    expect(rep.halt.reason).toContain(`KV hashes differ at revision ${c.revision}: kv2 has ${off}, kv1, kv3 have ${good}`);
    expect(rep.steps.every((x: any) => x.status === 'pending')).toBe(true);
    expect(await servers(s)).toEqual(before);
  }, 180_000);

  it('a member that diverges once upgraded: halted after it is back, naming it; the others are not stopped', async () => {
    const s = await up('3.3');
    const status = (await s.kv('status', '--json')).json<Array<{ name: string; leader: boolean }>>();
    for (const m of status) faultOn(s, m.name, { divergentOn: '3.4' });
    const r = await s.kv('upgrade', '--to', '3.4', '--yes', ...FAST, '--json');
    expect(r.code, r.stderr).toBe(3);
    const rep = r.json();
    const first = rep.plan[0].name;
    expect(status.find((x) => x.name === first)?.leader).toBe(false);
    const last = rep.consistency.at(-1);
    expect(last).toMatchObject({ at: `after ${first} is back on 3.4`, result: 'divergent' });
    expect(rep.halt.reason).toMatch(new RegExp(`${first} has \\d+, (kv\\d, kv\\d) have \\d+`));
    // only the first member was upgraded: the others still run 3.3
    expect((await servers(s)).filter((x) => !x.includes(':3.3.'))).toEqual([expect.stringMatching(new RegExp(`^${first}:3\\.4\\.`))]);
  }, 180_000);

  it('3.2 members: "not checked: HashKV needs etcd 3.3+" on the plan and in the report, never silently; the run goes on', async () => {
    const s = await up('3.2');
    faultOn(s, 'kv1', { divergent: true }); // a 3.2 member has no HashKV: nothing to compare yet
    const dry = await s.kv('upgrade', '--to', '3.3', '--dry-run');
    expect(dry.stdout + dry.stderr).toMatch(/not checked: HashKV needs etcd 3\.3\+ \(the members run 3\.2\)/);
    const r = await s.kv('upgrade', '--to', '3.3', '--yes', ...FAST, '--json');
    const rep = r.json();
    expect(rep.consistency[0]).toMatchObject({ at: 'before the first stop', result: 'not-checked' });
    expect(rep.consistency[0].detail).toMatch(/not checked: HashKV needs etcd 3\.3\+ \(kv1 runs 3\.2\.32\)/);
    expect(rep.consistency[1]).toMatchObject({ result: 'not-checked' });
    // once two members run 3.3 they are compared: kv1 (diverged) is named wherever it comes in the order
    expect(r.code, r.stderr).toBe(3);
    expect(rep.consistency.filter((c: any) => c.result === 'divergent')).toHaveLength(1);
    expect(rep.halt.reason).toMatch(/KV hashes differ at revision \d+: .*kv1 has \d+/);
  }, 180_000);
});
