import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fetchMembers, fetchScript } from '../../src/kv/rehearsal/fetch.js';
import { until } from '../helpers/kv.js';

/**
 * The rehearsal's fetch of members on other hosts (kv/rehearsal/fetch.ts), each "host" a real `sh -s` here
 * reached as the trial template reaches one (the script on its input): every member paused at once until every
 * archive is in, then resumed; a dead opsctl (kill -9) resumes its host's member by the input's end.
 */
describe("the rehearsal's fetch: every member paused at once, copied, resumed (a dead-man's switch on each host)", () => {
  const root = mkdtempSync(join(tmpdir(), 'opsctl-fetch-'));
  const procs: ChildProcess[] = [];
  afterAll(() => {
    for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    rmSync(root, { recursive: true, force: true });
  });

  /** A "member": a shell appending to its file every 10 ms (its data dir), as a live etcd writes its WAL. */
  const member = (name: string) => {
    const dir = join(root, name, 'data');
    mkdirSync(dir, { recursive: true });
    const p = spawn('sh', ['-c', 'while :; do echo x >> "$1/wal"; sleep 0.01; done', 'sh', dir], { stdio: 'ignore' });
    procs.push(p);
    return { dir, pid: p.pid! };
  };
  const state = (pid: number) => readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '')[0];
  const grows = async (file: string) => {
    const n = statSync(file).size;
    await until(() => statSync(file).size > n, 60_000, `${file} written again (its member resumed)`);
  };

  it('holds the first member paused until the last archive is in, copies each as it was, then resumes both', async () => {
    const a = member('a');
    const b = member('b');
    await until(() => existsSync(join(a.dir, 'wal')) && existsSync(join(b.dir, 'wal')), 30_000, 'both members writing');
    const gate = join(root, 'gate');
    const dest = (m: string) => join(root, 'copies', m);
    const run = fetchMembers(
      [
        { member: 'a', argv: ['sh', '-s'], pid: a.pid, paths: [a.dir] },
        // b's host answers once the test has seen a paused: its archive comes last
        { member: 'b', argv: ['sh', '-c', 'while [ ! -e "$1" ]; do sleep 0.05; done; exec sh -s', 'sh', gate], pid: b.pid, paths: [b.dir] },
      ],
      dest,
      { timeoutMs: 120_000 },
    );
    await until(() => state(a.pid) === 'T', 60_000, 'a paused');
    const aWhilePaused = readFileSync(join(a.dir, 'wal'), 'utf8');
    writeFileSync(gate, '');
    const r = await run;
    expect(r).toMatchObject({ ok: true });
    // a's copy is a as it was paused (nothing written meanwhile), and a was still paused when b's archive came in
    expect(readFileSync(join(dest('a'), a.dir, 'wal'), 'utf8')).toBe(aWhilePaused);
    expect(readFileSync(join(dest('b'), b.dir, 'wal'), 'utf8').length).toBeGreaterThan(0);
    await grows(join(a.dir, 'wal'));
    await grows(join(b.dir, 'wal'));
    expect([state(a.pid), state(b.pid)]).not.toContain('T');
  }, 180_000);

  it('a host that fails (its member gone) fails the fetch in its own words, and the other member is resumed', async () => {
    const a = member('c');
    const gone = spawn('true');
    await new Promise((res) => gone.once('exit', res));
    const r = await fetchMembers(
      [
        { member: 'c', argv: ['sh', '-s'], pid: a.pid, paths: [a.dir] },
        { member: 'd', argv: ['sh', '-s'], pid: gone.pid!, paths: [join(root, 'nowhere')] },
      ],
      (m) => join(root, 'copies2', m),
      { timeoutMs: 120_000 },
    );
    expect(r.ok).toBe(false);
    expect(r.why).toMatch(new RegExp(`^d: \`sh -s\` exit 3, tar exit \\d+ \\(.*the member's process ${gone.pid} is gone`));
    await grows(join(a.dir, 'wal'));
  }, 180_000);

  it('opsctl killed with -9 while its host holds the pause: the input ends and the host resumes its member', async () => {
    const a = member('e');
    // a stand-in for opsctl: it starts the host's shell, gives it the script, and keeps its input open
    const opsctl = spawn(
      process.execPath,
      [
        '-e',
        "const c = require('node:child_process').spawn('sh', ['-s'], { stdio: ['pipe', 'ignore', 'inherit'] }); c.stdin.write(process.env.SCRIPT); setInterval(() => {}, 1000);",
      ],
      { env: { ...process.env, SCRIPT: fetchScript(a.pid, [a.dir]) }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    procs.push(opsctl);
    let said = '';
    opsctl.stderr.on('data', (b: Buffer) => void (said += String(b)));
    await until(() => said.includes('opsctl-fetch: paused') && state(a.pid) === 'T', 60_000, 'e paused by its host');
    opsctl.kill('SIGKILL');
    await grows(join(a.dir, 'wal'));
    expect(state(a.pid)).not.toBe('T');
  }, 180_000);
});
