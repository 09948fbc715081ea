import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePorts } from '../../src/kv/sandbox/sandbox.js';
import { runCli, tempConfigDir } from '../helpers/cli.js';
import { until } from '../helpers/kv.js';

/**
 * kv sandbox up picks free ports below the ephemeral range, then its members bind them a moment later:
 * another sandbox (or any program) starting at the same moment can take one in between, and the member
 * dies on "address already in use" (a CI flake of kv-whole-cluster's "Ctrl-C at the question"). Nothing
 * is in the new cluster yet, so sandbox up lays it out again on fresh ports. `--ports` hands the first
 * layout the ports to try.
 */
let sb: ReturnType<typeof ownSandbox> | undefined;
let holder: ChildProcess | undefined;
afterEach(async () => {
  holder?.kill('SIGKILL');
  holder = undefined;
  await sb?.down();
  sb = undefined;
});

const portOf = (url: string) => Number(new URL(url).port);

/** This file's subject is `kv sandbox up` itself: a config dir of its own, opsctl kv in process there, and `down()` (the sandbox down, the dir gone). */
function ownSandbox() {
  const cfg = tempConfigDir('opsctl-kv-');
  const env = { OPSCTL_CONFIG_DIR: cfg.dir };
  const sandboxFile = join(cfg.dir, 'data', 'kv', 'sandbox', 'sandbox.json');
  const kv = (...argv: string[]) => runCli(['kv', ...argv], { env });
  return {
    env,
    kv,
    spec: () => JSON.parse(readFileSync(sandboxFile, 'utf8')) as { members: Array<{ name: string; endpoint: string; peerUrl?: string }> },
    async down() {
      if (existsSync(sandboxFile)) await kv('sandbox', 'down');
      cfg.cleanup();
    },
  };
}

async function upWith(ports: number[]) {
  sb = ownSandbox();
  return sb.kv('sandbox', 'up', '--members', '3', '--version', '3.2', '--heartbeat', '50ms', '--ports', ports.join(','));
}

/** Every member healthy on its own, distinct ports. */
async function healthyOnDistinctPorts(s: NonNullable<typeof sb>) {
  const members = s.spec().members;
  const ports = members.flatMap((m) => [portOf(m.endpoint), portOf(m.peerUrl!)]);
  expect(new Set(ports).size).toBe(6);
  const st = await s.kv('status', '--json');
  expect(st.code, st.stderr).toBe(0);
  expect(st.json<Array<{ healthy: boolean }>>().every((m) => m.healthy)).toBe(true);
  return ports;
}

describe('kv sandbox up: a port taken under a member', () => {
  it('a port the sandbox would pick is held by another program: laid out again on fresh ports, up and healthy; the holder untouched', async () => {
    const [held, ...rest] = await freePorts(6);
    holder = spawn(process.execPath, ['-e', `require('net').createServer().listen(${held}, '127.0.0.1', () => console.log('listening'))`], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let said = '';
    holder.stdout!.on('data', (c: Buffer) => (said += c.toString()));
    await until(() => said.includes('listening'), 20_000, 'the holder listening');

    const r = await upWith([held!, ...rest]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      new RegExp(`kv1 cannot start: pid ${holder.pid} .* holds its port .*: starting the sandbox again on fresh ports \\(layout 2 of 3\\)`),
    );
    const ports = await healthyOnDistinctPorts(sb!);
    expect(ports).not.toContain(held);
    expect(holder.exitCode).toBeNull();
  }, 180_000);

  it('two members racing for one port (as two sandboxes started at once may): the one that lost dies on "address already in use"; laid out again, up and healthy', async () => {
    const [a, b, c, d, e] = await freePorts(5);
    // kv2's client port is kv1's: both pass the look before their start, one bind fails.
    const r = await upWith([a!, b!, a!, c!, d!, e!]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /member kv[12] exited at its start: a port of it was taken \(its log: ".*(address already in use|EADDRINUSE).*"\): starting the sandbox again on fresh ports \(layout 2 of 3\)/,
    );
    await healthyOnDistinctPorts(sb!);
  }, 180_000);
});
