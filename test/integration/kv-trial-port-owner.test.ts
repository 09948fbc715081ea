import { execa } from 'execa';
import { mkdtempSync, rmSync } from 'node:fs';
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
  const trial = async (p: TrialPlan) => {
    const r = await execa('sh', ['-s'], { input: runScript(p, { timeoutS: 30, delimiter: 'END_OF_TRIAL' }), reject: false });
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
});
