import { afterEach, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { startCluster, type KvSandbox } from '../framework/index.js';

/** The rulebook's refusals through the built binary (simulated members): nothing is stopped, no journal written. */
let sb: KvSandbox | undefined;
afterEach(async () => {
  await sb?.down();
  sb = undefined;
});

async function pids(s: KvSandbox) {
  return (await s.kv('version', '--json')).json<Array<{ name: string; server: string }>>().map((v) => `${v.name}:${v.server}`);
}

describe('kv upgrade rulebook refusals (the built binary)', () => {
  it('3.3 → 3.4 with log-output: default: exit 1 naming log-outputs and the fix, every member still on 3.3', async () => {
    sb = (await startCluster({ members: 'simulated', size: 3, version: '3.3', extra: ['--config', 'log-output=default'] })).sandbox;
    const before = await pids(sb);
    const r = await runBin(['kv', 'upgrade', '--to', '3.4', '--yes'], { env: sb.env });
    expect(r.exitCode, String(r.stderr)).toBe(1);
    expect(String(r.stderr)).toMatch(/3\.3 → 3\.4 \[log-outputs\] member kv1: .*log-output: "default".*fix: write log-outputs: \[default\]/);
    expect(String(r.stderr)).toContain('nothing was stopped or changed');
    expect(await pids(sb)).toEqual(before);
    expect(sb.journal()).toBeUndefined();
  }, 120_000);

  it('3.4 → 3.5 with auth enabled: exit 1 naming the restore-based way, every member still on 3.4', async () => {
    sb = (await startCluster({ members: 'simulated', size: 3, version: '3.4' })).sandbox;
    sb.fault({ authEnabled: true });
    const before = await pids(sb);
    const r = await runBin(['kv', 'upgrade', '--to', '3.5', '--yes'], { env: sb.env });
    expect(r.exitCode, String(r.stderr)).toBe(1);
    expect(String(r.stderr)).toMatch(/\[auth-rolling\]: auth is enabled on the cluster; fix: .*kv restore --snapshot FILE --to-version 3\.5/);
    expect(await pids(sb)).toEqual(before);
    expect(sb.journal()).toBeUndefined();
  }, 120_000);
});
