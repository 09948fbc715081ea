import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type KvSandbox } from '../framework/index.js';

const KVCTL = new URL('../fixtures/kvctl.mjs', import.meta.url).pathname;

/**
 * Issue 58, item 2: what the dry run prints is what the run will spawn. The command driver's start
 * line carries {bin} (the hop's binaries' directory, from --target-bin) and {version} as the run passes
 * them, quoted as the run would; a plan where no member moves says so in one line and lists no command.
 */
describe('kv upgrade --dry-run, command driver: the commands as the run will spawn them', () => {
  let sb: KvSandbox;
  beforeAll(async () => {
    sb = (await startCluster({ members: 'simulated', size: 3, version: '3.2' })).sandbox;
  }, 120_000);
  afterAll(async () => {
    await sb.down();
  });
  const tpl = (verb: string, extra = '') => `"${process.execPath}" ${KVCTL} ${verb} {name}${extra}`;
  const driver = () => [
    '--endpoints',
    sb
      .spec()
      .members.map((m) => m.endpoint)
      .join(','),
    '--stop-cmd',
    tpl('stop'),
    '--start-cmd',
    tpl('start', ' {version} {bin}'),
    '--running-cmd',
    tpl('running'),
    '--no-backup',
  ];

  it('{bin} is the --target-bin directory, quoted as one argument, on every member that moves', async () => {
    // a directory with a blank, holding an etcd that says 3.3.27 (the run checks the binary's version)
    const dir = join(sb.dir, 'etcd 3.3', 'bin');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'etcd'), '#!/bin/sh\necho "etcd Version: 3.3.27"\necho "Git SHA: 0"\necho "Go Version: go1.12"\n');
    chmodSync(join(dir, 'etcd'), 0o755);
    const r = await sb.kv('upgrade', '--to', '3.3', '--dry-run', ...driver(), '--target-bin', `3.3=${dir}`);
    expect(r.code, r.stderr).toBe(0);
    const out = `${r.stdout}\n${r.stderr}`;
    expect(out).toMatch(/commands \(as they would run/);
    for (const m of sb.spec().members) expect(out).toContain(`${m.name}: start: ${process.execPath} ${KVCTL} start ${m.name} 3.3 '${dir}'`);
    expect(out).not.toMatch(/start \S+ 3\.3 ''/);
  }, 120_000);

  it('a plan already at its target prints one "nothing to do" line: no member, no command, no clients\' changes', async () => {
    const r = await sb.kv('upgrade', '--to', '3.2', '--dry-run', ...driver());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    const said = r.stderr.split('\n').filter((l) => /nothing to do/.test(l));
    expect(said).toEqual([expect.stringMatching(/every member and the cluster already run 3\.2: nothing to do$/)]);
    expect(r.stderr).not.toMatch(/commands \(as they would run|: (stop|start): |skip, already|clients:/);
  }, 120_000);
});
