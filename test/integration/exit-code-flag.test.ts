import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode, exitCodeHelp } from '../../src/core/exit-codes.js';
import { runCli, tempConfigDir } from '../helpers/cli.js';
import { mintToken } from '../helpers/labels.js';
import { startMock, type TestState } from '../helpers/mock.js';
import { useTrackerMock } from '../helpers/tracker.js';
import { startCluster, type KvSandbox } from '../framework/index.js';

/**
 * `--exit-code` on every apply and plan, so a CI job can gate on drift: 0 nothing to do, 6 (`changes`)
 * when the plan has changes (pending with --dry-run, made without), 1 on an error, 2 on bad input;
 * without the flag, a plan with changes still exits 0.
 */
describe('the changes code', () => {
  it('is 6, clashes with no other code, and `help exit-codes` documents it', async () => {
    expect(ExitCode.changes).toBe(6);
    const codes = exitCodeHelp.map(([code]) => code);
    expect(new Set(codes).size).toBe(codes.length);
    const help = await runCli(['help', 'exit-codes']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^\s*6\s+changes\s+with --exit-code/m);
  });
});

describe('tracker apply and stories import --exit-code', () => {
  const t = useTrackerMock((tracker) => {
    tracker.labels = [];
  });
  const YAML = 'labels:\n  - name: bug\n    color: "#d73a4a"\n';

  it('labels apply: 6 with changes pending (nothing sent), 6 when made, then 0 with nothing to do; 2 for a bad file; 0 without the flag', async () => {
    const f = t.file('labels.yaml', YAML);
    const apply = (...extra: string[]) => runCli(['tracker', 'labels', 'apply', '-f', f, ...extra], { env: t.env });
    expect((await apply('--dry-run')).code).toBe(0);
    const pending = await apply('--dry-run', '--exit-code');
    expect(pending.code).toBe(ExitCode.changes);
    expect(t.writes()).toHaveLength(0);
    expect((await apply('--exit-code')).code).toBe(ExitCode.changes);
    expect(t.writes()).toHaveLength(1);
    const clean = await apply('--dry-run', '--exit-code');
    expect(clean.code, clean.stderr).toBe(0);
    expect(clean.stderr).toContain('nothing to do');
    expect((await apply('--exit-code')).code).toBe(0);
    const bad = await runCli(['tracker', 'labels', 'apply', '-f', t.file('bad.yaml', 'labels:\n  - color: "#fff"\n'), '--dry-run', '--exit-code'], {
      env: t.env,
    });
    expect(bad.code).toBe(ExitCode.usage);
  });

  it('stories import: 6 while stories are missing, 0 once they all exist', async () => {
    const csv = t.file('s.csv', 'external_id,name\nx-1,One\nx-2,Two\n');
    const importing = (...extra: string[]) => runCli(['tracker', 'stories', 'import', '-f', csv, ...extra], { env: t.env });
    expect((await importing('--dry-run', '--exit-code')).code).toBe(ExitCode.changes);
    expect((await importing('--exit-code')).code).toBe(ExitCode.changes);
    expect((await importing('--dry-run', '--exit-code')).code).toBe(0);
  });
});

describe('labels apply --exit-code', () => {
  let mock: Awaited<ReturnType<typeof startMock>>;
  let env: NodeJS.ProcessEnv;
  const cfg = tempConfigDir();
  const file = (name: string, text: string) => (writeFileSync(join(cfg.dir, name), text), join(cfg.dir, name));
  beforeAll(async () => {
    mock = await startMock({ services: ['labels'] });
    await mock.service('labels');
    env = { OPSCTL_CONFIG_DIR: cfg.dir, OPSCTL_LABELS_URL: mock.url, OPSCTL_ACCESS_TOKEN: await mintToken(mock) };
    await mock.store.write((s: TestState) => {
      s.labels.labels = [];
    });
  });
  afterAll(async () => {
    await mock.close();
    cfg.cleanup();
  });

  it('6 for a label to create (dry run: nothing sent), 0 once the service matches the file', async () => {
    const f = file('label.yaml', 'labelType: SHARED\nproperties:\n  title: Exit code\n');
    const apply = (...extra: string[]) => runCli(['labels', 'apply', '-f', f, ...extra], { env });
    const pending = await apply('--dry-run', '--exit-code');
    expect(pending.code, pending.stderr).toBe(ExitCode.changes);
    expect(mock.requests.filter((r) => r.method !== 'GET')).toHaveLength(0);
    const made = await apply('--exit-code', '--json');
    expect(made.code, made.stderr).toBe(ExitCode.changes);
    const id = made.json<{ label: string }>().label;
    const export1 = await runCli(['labels', 'export', id.replace(/^labels\//, ''), '--json'], { env });
    expect(export1.code, export1.stderr).toBe(0);
    const again = await runCli(['labels', 'apply', '-f', file('same.yaml', export1.stdout), '--dry-run', '--exit-code'], { env });
    expect(again.code, again.stderr).toBe(0);
  });
});

describe('kv upgrade --dry-run --exit-code', () => {
  let sb: KvSandbox | undefined;
  afterEach(async () => {
    await sb?.down();
    sb = undefined;
  });

  it('6 for a cluster below the target, 0 for one already there; nothing is stopped', async () => {
    sb = (await startCluster({ members: 'simulated', size: 3, version: '3.3' })).sandbox;
    const below = await sb.kv('upgrade', '--to', '3.4', '--dry-run', '--exit-code');
    expect(below.code, below.stderr).toBe(ExitCode.changes);
    const plain = await sb.kv('upgrade', '--to', '3.4', '--dry-run');
    expect(plain.code, plain.stderr).toBe(0);
    const there = await sb.kv('upgrade', '--to', '3.3', '--dry-run', '--exit-code');
    expect(there.code, there.stderr + there.stdout).toBe(0);
    const versions = (await sb.kv('version', '--json')).json<Array<{ server: string }>>();
    expect(versions.map((v) => v.server.split('.').slice(0, 2).join('.'))).toEqual(['3.3', '3.3', '3.3']);
  });
});
