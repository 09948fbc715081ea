import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from '../../src/kv/sandbox/sandbox.js';

/**
 * One etcd binary started alone on a scratch data dir and loopback ports, with the flags and ETCD_*
 * variables given (and nothing else of this process's environment), only as long as it takes to see
 * what it does with them: it exits (its code and every word it wrote), or it serves (its log says
 * "ready to serve client requests", as every etcd from 3.0 to 3.7 does, and /health answers 200), and
 * is then stopped with SIGTERM (its own PID only). No fixed wait: each is a condition up to `deadlineMs`.
 */
export interface Probe {
  served: boolean;
  /** The exit code when it exited before serving (a signal's exit: null). */
  exitCode?: number | null;
  /** Its stdout and stderr together, as written. */
  output: string;
  /** From the spawn to serving or exiting. */
  ms: number;
}

export async function probeEtcd(dir: string, o: { args?: string[]; env?: Record<string, string>; deadlineMs?: number }): Promise<Probe> {
  for (let attempt = 0; ; attempt++) {
    const p = await probeOnce(dir, o);
    // (a port taken between the pick and etcd's bind: the only outcome that is not the binary's verdict)
    if (p.served || attempt >= 3 || !/address already in use/.test(p.output)) return p;
  }
}

async function probeOnce(dir: string, o: { args?: string[]; env?: Record<string, string>; deadlineMs?: number }): Promise<Probe> {
  const deadline = o.deadlineMs ?? 120_000;
  const data = mkdtempSync(join(tmpdir(), 'opsctl-probe-'));
  const [client, peer] = await freePorts(2);
  const c = `http://127.0.0.1:${client}`;
  const p = `http://127.0.0.1:${peer}`;
  const base = [
    '--name',
    'probe',
    '--data-dir',
    join(data, 'data'),
    '--listen-client-urls',
    c,
    '--advertise-client-urls',
    c,
    '--listen-peer-urls',
    p,
    '--initial-advertise-peer-urls',
    p,
    '--initial-cluster',
    `probe=${p}`,
  ];
  const t0 = Date.now();
  const child = spawn(join(dir, 'etcd'), [...base, ...(o.args ?? [])], { env: { ...(o.env ?? {}) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (b: Buffer) => (output += b.toString()));
  child.stderr.on('data', (b: Buffer) => (output += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let code: number | null | undefined;
  void exited.then((x) => (code = x));
  try {
    let served = false;
    while (code === undefined && !served && Date.now() - t0 < deadline) {
      if (output.includes('ready to serve client requests')) served = await health(c);
      if (!served) await Promise.race([exited, new Promise((r) => setTimeout(r, 25))]);
    }
    const ms = Date.now() - t0;
    if (served) return { served: true, output, ms };
    if (code === undefined) throw new Error(`etcd (${dir}) neither served nor exited within ${deadline} ms: ${output.slice(-2000)}`);
    return { served: false, exitCode: code, output, ms };
  } finally {
    if (code === undefined && child.pid) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(killer);
    }
    rmSync(data, { recursive: true, force: true });
  }
}

function health(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(`${url}/health`, { timeout: 5000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200));
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}
