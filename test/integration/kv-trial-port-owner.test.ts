import { execa } from 'execa';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TrialPlan } from '../../src/kv/trial/rewrite.js';
import { parseRun, runScript } from '../../src/kv/trial/script.js';

/**
 * The trial start's script (what runs on the member's host) judges a trial member ready only when
 * /health is answered by the trial's own process: another program that took the chosen port in the
 * meantime (another etcd, on a busy host) answers /health too, and a binary that is about to refuse
 * the member's settings must not pass for one that starts.
 */
describe('kv trial: a /health answer from another process on the port is not the trial member', () => {
  const work = mkdtempSync(join(tmpdir(), 'opsctl-trial-owner-'));
  let other: Server;
  let taken: number;
  const healthy = (): Server => createServer((_req, res) => res.end('{"health":"true"}'));
  const freePort = async () => {
    const s = createServer();
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    const port = (s.address() as AddressInfo).port;
    await new Promise((resolve) => s.close(resolve));
    return port;
  };
  const plan = (name: string, port: number, program: string[]): TrialPlan => ({
    program,
    args: [],
    env: {},
    cwd: work,
    clientUrl: `http://127.0.0.1:${port}`,
    dir: join(work, name),
    notes: [],
  });
  const trial = async (p: TrialPlan, user?: { uid: number; gid: number }) => {
    const r = await execa('sh', ['-s'], { input: runScript(p, { timeoutS: 30, delimiter: 'END_OF_TRIAL', ...(user ? { user } : {}) }), reject: false });
    return parseRun(r.stdout);
  };

  beforeAll(async () => {
    other = healthy();
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    taken = (other.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => other.close(resolve));
    rmSync(work, { recursive: true, force: true });
  });

  it('a binary that refuses its settings while another server answers healthy on its port: exited, in its own words', async () => {
    // it lives a while (as etcd reading its config) and exits 1, never binding the port
    const refusing = ['/bin/sh', '-c', 'sleep 1; echo "cannot unmarshal string into Go struct field configYAML.log-output" >&2; exit 1'];
    const out = await trial(plan('refusing', taken, refusing));
    expect(out).toMatchObject({ kind: 'exited', code: 1 });
    expect(out.kind === 'exited' && out.log).toContain('cannot unmarshal string');
  });

  it('a binary that serves /health on its own port: ready', async () => {
    const port = await freePort();
    const serving = [process.execPath, '-e', `require('http').createServer((q, s) => s.end('{"health":"true"}')).listen(${port}, '127.0.0.1')`];
    const out = await trial(plan('serving', port, serving));
    expect(out).toMatchObject({ kind: 'ready' });
  });

  // A trial runs beside the live member it proves (on its host) and beside the rehearsal's clone (here): it takes
  // the CPU they leave (measured on 2 cores: the clone's steps began 300-450 ms sooner with the trials below it)
  it("the trial member runs 10 below the script's reader in priority", async () => {
    const port = await freePort();
    const nice = (stat: string) => Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    const serving = [
      process.execPath,
      '-e',
      `require('fs').writeFileSync(${JSON.stringify(join(work, 'nice'))}, require('fs').readFileSync('/proc/self/stat', 'utf8')); require('http').createServer((q, s) => s.end('{"health":"true"}')).listen(${port}, '127.0.0.1')`,
    ];
    const out = await trial(plan('niced', port, serving));
    expect(out).toMatchObject({ kind: 'ready' });
    expect(nice(readFileSync(join(work, 'nice'), 'utf8'))).toBe(Math.min(19, nice(readFileSync('/proc/self/stat', 'utf8')) + 10));
  });

  // opsctl killed -9 while a trial member starts (during a rehearsal's trials, say): the script's shell was left
  // with a broken pipe, died of it at its next word without its trap, and the trial member (an etcd on a copy of
  // the member's data) lived on. Now the script says it waits once a second and ends the trial when that breaks.
  it('the one reading the script killed -9 while the trial member starts: nothing of the trial outlives it', async () => {
    const port = await freePort();
    // a server that answers /health "false" (as a member without quorum does): the trial waits on it
    const waiting = [process.execPath, '-e', `require('http').createServer((q, s) => s.end('{"health":"false"}')).listen(${port}, '127.0.0.1')`];
    const p = plan('reader-killed', port, waiting);
    const script = runScript(p, { timeoutS: 600, delimiter: 'END_OF_TRIAL' });
    // the reader: a process that runs `sh -s` as opsctl does (its stdout a pipe it reads), killed -9 below
    const reader = execa(
      process.execPath,
      [
        '-e',
        `const c = require('child_process').spawn('sh', ['-s'], { stdio: ['pipe', 'pipe', 'ignore'] }); c.stdin.end(process.env.SCRIPT); c.stdout.on('data', (b) => process.stdout.write(b));`,
      ],
      { env: { SCRIPT: script }, reject: false },
    );
    const pidFile = join(p.dir, 'etcd.pid');
    const until = async (ok: () => boolean, what: string) => {
      const deadline = Date.now() + 60_000;
      while (!ok()) {
        expect(Date.now() < deadline, what).toBe(true);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    await until(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '', 'the trial member started');
    const member = Number(readFileSync(pidFile, 'utf8').trim());
    reader.kill('SIGKILL');
    await reader;
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await until(() => !alive(member), `the trial member (pid ${member}) still runs after its reader was killed`);
    await until(() => !existsSync(p.dir), `the trial's scratch dir ${p.dir} is still there`);
  }, 150_000);

  // As root for a member of another user, the script starts the trial through runuser, which forks: the
  // process it kills at the end is runuser, and etcd (here a server) lived on, holding its ports.
  it.runIf(process.getuid?.() === 0)(
    "as the member's own user (runuser forks): nothing of the trial outlives its script",
    async () => {
      chmodSync(work, 0o755); // the member's user reaches its scratch dir
      const port = await freePort();
      const serving = [process.execPath, '-e', `require('http').createServer((q, s) => s.end('{"health":"true"}')).listen(${port}, '127.0.0.1')`];
      const out = await trial(plan('as-nobody', port, serving), { uid: 65534, gid: 65534 });
      expect(out).toMatchObject({ kind: 'ready' });
      const refused = () =>
        new Promise<boolean>((resolve) => {
          const c = connect(port, '127.0.0.1');
          c.once('connect', () => (c.destroy(), resolve(false)));
          c.once('error', () => resolve(true));
        });
      // killed with -9 at the script's exit: the port is free at once; a busy machine gets 60 s
      const deadline = Date.now() + 60_000;
      while (!(await refused())) {
        expect(Date.now() < deadline, `the trial's server still answers on port ${port} after its script ended`).toBe(true);
        await new Promise((r) => setTimeout(r, 200));
      }
    },
    120_000,
  );
});
