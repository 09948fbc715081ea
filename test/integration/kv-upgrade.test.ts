import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { clusterKey } from '../../src/kv/journal/journal.js';
import { runBin } from '../helpers/bin.js';
import { inProcess } from '../helpers/in-process.js';
import { until } from '../helpers/kv.js';
import { startCluster, type KvSandbox } from '../framework/index.js';

// Fast but never speed-dependent: short polls, generous timeouts.
const FAST = ['--poll-interval', '50ms', '--healthy-timeout', '30s', '--stop-timeout', '20s'];

let sb: KvSandbox;
beforeEach(async () => (sb = (await startCluster({ members: 'simulated', size: 3, version: '3.2' })).sandbox));
afterEach(() => sb.down());

async function versions() {
  const r = await sb.kv('version', '--json');
  return r.json<Array<{ name: string; server: string; cluster: string }>>();
}

describe('kv upgrade on a simulated sandbox', () => {
  it('upgrades 3.2 → 3.3 one member at a time, leader last; data written before is readable after', async () => {
    for (let i = 0; i < 10; i++) expect((await sb.kv('put', `k${i}`, `value ${i}`)).code).toBe(0);
    const status = (await sb.kv('status', '--json')).json<Array<{ name: string; leader: boolean; id: string }>>();
    const leader = status.find((s) => s.leader)!.name;
    expect(status.every((s) => /^[0-9a-f]{1,16}$/.test(s.id))).toBe(true); // uint64 ids in hex, as etcdctl prints them

    const dry = await sb.kv('upgrade', '--to', '3.3', '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/Plan: upgrade 3.2 → 3.3/);
    expect(dry.stdout).toMatch(new RegExp(`3\\. ${leader} .*\\[leader, last\\]`));
    expect(sb.journal()).toBeUndefined();

    const r = await sb.kv('upgrade', '--to', '3.3', '--yes', ...FAST, '--json', '--debug');
    expect(r.code, r.stderr).toBe(0);
    // Each upgraded member is asked on its new gateway prefix: at most one /v3alpha redirect each
    // (the first look after its restart), not one on every request.
    expect(r.stderr).toMatch(/v3beta\/maintenance\/status → 200/);
    expect((r.stderr.match(/\(via http/g) ?? []).length).toBeLessThanOrEqual(3);
    const report = r.json();
    expect(report.status).toBe('done');
    expect(report.steps.every((s: any) => s.status === 'done')).toBe(true);
    const startOrder = report.steps.filter((s: any) => s.kind === 'start').map((s: any) => s.member);
    expect(startOrder[2]).toBe(leader);
    expect(report.snapshots).toHaveLength(3);
    expect(report.steps.filter((s: any) => s.kind === 'backup-data')).toHaveLength(3);
    expect(
      report.steps.filter((s: any) => s.kind === 'backup-data').every((s: any) => /^\d+ files, .* on disk \(\d+ bytes.*\) copied to \//.test(s.detail)),
    ).toBe(true);
    expect(report.totals.imposedMs).toBeGreaterThan(0);
    for (const s of report.steps) expect(typeof s.ms).toBe('number');

    for (const v of await versions()) {
      expect(v.server).toMatch(/^3\.3\./);
      expect(v.cluster).toBe('3.3.0');
    }
    expect(sb.logs()).toContain('updated the cluster version from 3.2 to 3.3');
    expect(sb.logs()).toMatch(/is not up to date: member kv\d has a higher version 3.3/);
    expect(sb.logs()).toMatch(/lost the TCP streaming connection with peer/);
    for (let i = 0; i < 10; i++) {
      const g = await sb.kv('get', `k${i}`);
      expect(g.stdout.trim()).toBe(`value ${i}`);
    }

    // 3.3 serves /v3beta and redirects /v3alpha there.
    const ep = sb.spec().members[0]!.endpoint;
    const res = await fetch(`${ep}/v3alpha/kv/put`, {
      method: 'POST',
      body: JSON.stringify({ key: Buffer.from('a').toString('base64'), value: Buffer.from('b').toString('base64') }),
    });
    expect(res.status).toBe(200);
    expect(res.redirected && res.url).toBe(`${ep}/v3beta/kv/put`);

    // A value over --max-request-bytes (1.5 MiB) is refused by the server, clearly.
    const big = await sb.kv('put', 'big', 'x'.repeat(1.6 * 1024 * 1024));
    expect(big.code).toBe(1);
    expect(big.stderr).toMatch(/request is too large/);

    // Once the cluster version moved, roll-back refuses; a second upgrade has nothing to do.
    const rb = await sb.kv('rollback', ...FAST);
    expect(rb.code).toBe(1);
    expect(rb.stderr).toMatch(/kv rollback refused before any change: the cluster version is already 3\.3\.0: members no longer go back to 3\.2 by a restart/);
    // 3.3 has no downgrade API: the way back named is the restore point
    expect(rb.stderr).toMatch(/the way back: a restore from the snapshot taken before the first stop .*opsctl kv restore --snapshot /);
    expect(rb.stderr).not.toMatch(/kv downgrade/);
    const again = await sb.kv('upgrade', '--to', '3.3', '--yes', ...FAST);
    expect(again.code).toBe(0);
    expect(again.stderr).toMatch(/nothing to do/);
  });

  it('refuses an unhealthy cluster before any change (exit 1)', async () => {
    const m = sb.spec().members[1]!;
    const pid = Number(readFileSync(m.pidFile, 'utf8'));
    process.kill(pid, 'SIGTERM');
    await until(async () => (await sb.kv('health')).code === 1, 20_000, 'a member down');
    const r = await sb.kv('upgrade', '--to', '3.3', '--yes', ...FAST);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/refused before any change/);
    expect(r.stderr).toMatch(new RegExp(`member ${m.name} .* not reachable`));
    expect(sb.journal()).toBeUndefined();
    for (const v of (await versions()).filter((x) => x.server)) expect(v.server).toMatch(/^3\.2\./);
  });

  it('halts before the stop when the snapshot is corrupt (exit 3)', async () => {
    sb.fault({ corruptSnapshot: true });
    const r = await sb.kv('upgrade', '--to', '3.3', '--yes', ...FAST);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/snapshot of kv\d failed before the member was stopped: .*corrupt.*SHA-256 trailer mismatch/);
    expect(r.stderr).toMatch(/Roll back with: +opsctl kv rollback/);
    const j = sb.journal();
    expect(j.status).toBe('halted');
    expect(j.steps[0]).toMatchObject({ kind: 'snapshot', status: 'failed' });
    expect(j.steps[1]).toMatchObject({ kind: 'stop', status: 'pending' });
    const st = (await sb.kv('sandbox', 'status', '--json')).json<Array<{ running: boolean; healthy: boolean; server: string }>>();
    expect(st.every((m) => m.running && m.healthy && m.server.startsWith('3.2'))).toBe(true);
  });

  it('halts when the new member never becomes healthy (exit 3, cluster mixed), and roll-back works', async () => {
    sb.fault({ neverHealthyOn: '3.3' });
    const r = await sb.kv('upgrade', '--to', '3.3', '--yes', ...FAST, '--healthy-timeout', '2s');
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/did not become healthy on 3.3/);
    const rollbackLine = /Roll back with: +(.*)/.exec(r.stderr)![1];
    expect(rollbackLine).toBe('opsctl kv rollback');
    const mixed = await versions();
    expect(mixed.filter((v) => v.server.startsWith('3.3'))).toHaveLength(1);
    expect(mixed.filter((v) => v.server.startsWith('3.2'))).toHaveLength(2);
    expect(mixed.every((v) => v.cluster === '3.2.0')).toBe(true);

    const rb = await sb.kv('rollback', ...FAST);
    expect(rb.code, rb.stderr).toBe(0);
    expect(rb.stderr).toMatch(/rolled back kv\d → 3.2/);
    for (const v of await versions()) expect(v.server).toMatch(/^3\.2\./);
    expect((await sb.kv('health')).code).toBe(0);
    expect(sb.journal().status).toBe('rolled-back');
  });

  it('a backup directory that cannot be made: refused before the stop (exit 3, nothing stopped; issue 27: never a member left down behind a failing backup); roll-back leaves 3.2', async () => {
    // The backup destination cannot be created: a file sits where its directory should be.
    const key = clusterKey(sb.spec().members.map((m) => m.endpoint));
    mkdirSync(join(sb.dir, 'data', 'kv', 'backups'), { recursive: true });
    writeFileSync(join(sb.dir, 'data', 'kv', 'backups', key), 'in the way');
    const r = await sb.kv('upgrade', '--to', '3.3', '--yes', ...FAST);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(
      /not stopping kv\d: its backup could not be measured: ENOTDIR.*was not touched: fix what stopped the measure \(the host's reach, or the backup directory\)/,
    );
    const health = (await sb.kv('health', '--json')).json<Array<{ healthy: boolean }>>();
    expect(health.filter((h) => !h.healthy)).toHaveLength(0);

    const rb = await sb.kv('rollback', ...FAST, '--json');
    expect(rb.code, rb.stderr).toBe(0);
    expect((await sb.kv('health')).code).toBe(0);
    for (const v of await versions()) expect(v.server).toMatch(/^3\.2\./);
  });

  it('Ctrl-C stops at a safe point (exit 130, journal consistent); the re-run resumes and finishes', async () => {
    const run = inProcess(['kv', 'upgrade', '--to', '3.3', '--yes', ...FAST, '--settle', '30s'], sb.env);
    // The first member is back and healthy: the run is now in its 30 s settle.
    await until(() => sb.journal()?.steps.some((s: any) => s.kind === 'wait-healthy' && s.status === 'done'), 30_000, 'the first member back');
    run.interrupt();
    expect(await run.exited).toBe(130);
    const j = sb.journal();
    expect(j.status).toBe('interrupted');
    expect(j.steps.filter((s: any) => s.status === 'running')).toHaveLength(0);
    expect(j.steps.filter((s: any) => s.status === 'done').map((s: any) => s.kind)).toEqual([
      'snapshot',
      'stop',
      'wait-stopped',
      'backup-data',
      'start',
      'wait-healthy',
    ]);

    const r = await sb.kv('upgrade', '--to', '3.3', '--yes', ...FAST, '--settle', '0s', '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ status: 'done', resumed: true });
    // Timings are this run's: its waits never exceed its own wall time.
    expect(r.json().totals.imposedMs).toBeLessThanOrEqual(r.json().totals.ms);
    for (const v of await versions()) expect(v.cluster).toBe('3.3.0');
  });

  it('opsctl killed mid-upgrade (SIGKILL): the re-run resumes where it stopped and finishes', async () => {
    const child = runBin(['kv', 'upgrade', '--to', '3.3', '--yes', ...FAST, '--settle', '30s'], { env: sb.env });
    await until(() => sb.journal()?.steps.some((s: any) => s.kind === 'wait-healthy' && s.status === 'done'), 30_000, 'the first member back');
    child.kill('SIGKILL');
    await child;
    const before = sb.journal();
    expect(before.status).toBe('running'); // it never got to say otherwise
    const first = before.steps.find((s: any) => s.kind === 'wait-healthy' && s.status === 'done').member;

    const r = await runBin(['kv', 'upgrade', '--to', '3.3', '--yes', ...FAST, '--settle', '0s', '--json'], { env: sb.env });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    // the killed run's journal lock is taken over at once (its pid is gone), not waited out
    expect(String(r.stderr)).toContain(`took over the lock on the kv journal`);
    expect(String(r.stderr)).toContain(`its holder (opsctl pid ${child.pid}) is gone`);
    expect(String(r.stderr)).not.toContain('go stale');
    const report = JSON.parse(String(r.stdout));
    expect(report).toMatchObject({ status: 'done', resumed: true });
    // The member upgraded before the kill was not upgraded again.
    const starts = report.steps.filter((s: any) => s.kind === 'start' && s.member === first);
    expect(starts[0].startedAt).toBe(before.steps.find((s: any) => s.id === `${first}/start`).startedAt);
    for (const v of await versions()) expect(v.cluster).toBe('3.3.0');
    expect(existsSync(join(sb.dir, 'data', 'kv', 'journals'))).toBe(true);
  });
});

describe('kv upgrade through the command driver (templates, no shell)', () => {
  const KVCTL = new URL('../fixtures/kvctl.mjs', import.meta.url).pathname;

  it('with --endpoints and --stop-cmd/--start-cmd/--running-cmd', async () => {
    const eps = sb
      .spec()
      .members.map((m) => m.endpoint)
      .join(',');
    // Without a --v2-size-cmd the v2 data size is unknown and --settle auto would wait 2 minutes.
    const tpl = (verb: string, extra = '') => `"${process.execPath}" ${KVCTL} ${verb} {name}${extra}`;
    const noDriver = await sb.kv('upgrade', '--to', '3.3', '--yes', '--endpoints', eps, ...FAST);
    expect(noDriver.code).toBe(2);
    expect(noDriver.stderr).toMatch(/no way to stop and start members/);
    const r = await sb.kv(
      'upgrade',
      '--to',
      '3.3',
      '--yes',
      '--endpoints',
      eps,
      '--stop-cmd',
      tpl('stop'),
      '--start-cmd',
      tpl('start', ' {version}'),
      '--running-cmd',
      tpl('running'),
      '--backup-cmd',
      tpl('backup', ' {run}'),
      ...FAST,
      '--settle',
      '0s',
      '--json',
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().status).toBe('done');
    // The backup template ran on each stopped member ({run} = the journal id).
    const backups = r.json().steps.filter((s: any) => s.kind === 'backup-data');
    expect(backups.map((s: any) => s.status)).toEqual(['done', 'done', 'done']);
    const run = sb.journal().id;
    for (const m of sb.spec().members) expect(existsSync(join(`${m.dataDir}.bak-${run}`, 'member', 'kv.json'))).toBe(true);
    expect(backups[0].detail).toMatch(/kvctl.mjs backup kv\d \S+` done: copied to /);
    // every copy the run made is in sight (issue 58, part 3): kv backups list names each copy on a host; this
    // template's words name no path holding {run} (kvctl.mjs finds it itself), so its size is "not known", with why
    const listed = await sb.kv('backups', 'list', '--json');
    expect(listed.code, listed.stderr).toBe(0);
    const onHosts = (JSON.parse(listed.stdout) as Array<{ kind: string; member: string; sizeUnknown: string }>).filter((x) => x.kind === 'host-copy');
    expect(onHosts.map((x) => x.member).sort()).toEqual(
      sb
        .spec()
        .members.map((m) => m.name)
        .sort(),
    );
    for (const h of onHosts) {
      expect(h).toMatchObject({ run, host: '127.0.0.1', bytes: null, size: 'not known' });
      expect(h.sizeUnknown).toMatch(/^the backup template \(.*kvctl\.mjs backup kv\d \S+`?\) names no absolute path holding \{run\} /);
    }
    expect((await sb.kv('backups', 'list')).stderr).toMatch(
      /and 3 data-dir copies on the members' hosts \(127\.0\.0\.1\), made by the driver's backup template: size not known \(the backup template/,
    );
    // prune: the copies on the hosts go only through the cluster file's drop-backup template; without --cluster nothing goes
    const bare = await sb.kv('backups', 'prune', '--keep', '0', '--yes');
    expect(bare.code, bare.stderr).toBe(2);
    expect(bare.stderr).toContain("not pruning: 3 data-dir copies on the members' hosts");
    expect(bare.stderr).toContain('pass --cluster FILE');
    for (const m of sb.spec().members) expect(existsSync(`${m.dataDir}.bak-${run}`)).toBe(true);
    const file = join(sb.dir, 'cluster.json');
    writeFileSync(
      file,
      JSON.stringify({
        members: sb.spec().members.map((m) => ({ name: m.name, endpoint: m.endpoint })),
        driver: {
          type: 'command',
          stop: tpl('stop'),
          start: tpl('start', ' {version}'),
          running: tpl('running'),
          backup: tpl('backup', ' {run}'),
          dropBackup: tpl('drop', ' {run}'),
        },
      }),
    );
    const pruned = await sb.kv('backups', 'prune', '--keep', '0', '--yes', '--cluster', file);
    expect(pruned.code, pruned.stderr).toBe(0);
    for (const m of sb.spec().members) {
      expect(existsSync(`${m.dataDir}.bak-${run}`)).toBe(false);
      expect(pruned.stderr).toMatch(
        new RegExp(`${m.name}: the data-dir copy \\{run\\} ${run} removed on 127\\.0\\.0\\.1: .*kvctl\\.mjs drop ${m.name} ${run}\`? done`),
      );
    }
    expect((await sb.kv('backups', 'list', '--json')).stdout.trim()).toBe('[]');
    for (const v of await versions()) expect(v.cluster).toBe('3.3.0');
  });

  it('a start that fails halts with the member down (exit 3); the re-run resumes at the start and finishes', async () => {
    const eps = sb
      .spec()
      .members.map((m) => m.endpoint)
      .join(',');
    const tpl = (verb: string, extra = '') => `"${process.execPath}" ${KVCTL} ${verb} {name}${extra}`;
    const argv = [
      'upgrade',
      '--to',
      '3.3',
      '--yes',
      '--endpoints',
      eps,
      '--stop-cmd',
      tpl('stop'),
      '--start-cmd',
      tpl('start', ' {version}'),
      '--running-cmd',
      tpl('running'),
      ...FAST,
      '--settle',
      '0s',
    ];
    // No backup template: refused (exit 2) unless --no-backup says so, never a silent skip.
    const noBackup = await sb.kv(...argv);
    expect(noBackup.code, noBackup.stderr).toBe(2);
    expect(noBackup.stderr).toMatch(/the command driver has no data-dir backup template/);
    expect(noBackup.stderr).toMatch(/--no-backup/);
    expect(sb.journal()).toBeUndefined();
    argv.push('--no-backup');
    const dry = await sb.kv(...argv, '--dry-run');
    expect(dry.stdout).toMatch(/no data-dir backup \(--no-backup\)/);
    expect(dry.stdout).toMatch(/! --no-backup: the data dirs are not backed up/);
    writeFileSync(join(sb.dir, 'FAIL-START'), '');
    const r = await sb.kv(...argv);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/starting kv\d on 3.3 failed: .*FAIL-START is set/);
    expect(sb.journal().steps.find((s: any) => s.kind === 'backup-data').detail).toMatch(/not backed up: --no-backup/);
    expect(r.stderr).toMatch(/Roll back with: +opsctl kv rollback --endpoints/);
    const health = (await sb.kv('health', '--json')).json<Array<{ healthy: boolean }>>();
    expect(health.filter((h) => !h.healthy)).toHaveLength(1); // one member down, never two
    expect(health.filter((h) => h.healthy)).toHaveLength(2);

    rmSync(join(sb.dir, 'FAIL-START'));
    const again = await sb.kv(...argv, '--json');
    expect(again.code, again.stderr).toBe(0);
    expect(again.json()).toMatchObject({ status: 'done', resumed: true });
    for (const v of await versions()) expect(v.cluster).toBe('3.3.0');
  });

  it('a member falling sick between two members: halts before the next stop (exit 3), nothing else changed; resumes once healthy', async () => {
    const eps = sb
      .spec()
      .members.map((m) => m.endpoint)
      .join(',');
    const tpl = (verb: string, extra = '') => `"${process.execPath}" ${KVCTL} ${verb} {name}${extra}`;
    // --settle auto runs the v2-size command after each member is back; with SICKEN it makes the
    // two members still on 3.2 unhealthy, right before the next member would be stopped.
    const argv = [
      'upgrade',
      '--to',
      '3.3',
      '--yes',
      '--endpoints',
      eps,
      '--stop-cmd',
      tpl('stop'),
      '--start-cmd',
      tpl('start', ' {version}'),
      '--running-cmd',
      tpl('running'),
      '--v2-size-cmd',
      tpl('v2size'),
      '--no-backup',
      ...FAST,
      '--settle',
      'auto',
    ];
    writeFileSync(join(sb.dir, 'SICKEN'), '');
    const r = await sb.kv(...argv);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/not stopping (kv\d): kv\d is not healthy .*; \1 was not touched/);
    const j = sb.journal();
    const second = j.members.find((m: any) => j.steps.some((s: any) => s.member === m.name && s.status === 'pending' && s.error))!.name;
    expect(j.steps.filter((s: any) => s.member === second).every((s: any) => s.status === 'pending')).toBe(true);
    const vs = await versions();
    expect(vs.filter((v) => v.server.startsWith('3.3'))).toHaveLength(1);
    expect(vs.filter((v) => v.server.startsWith('3.2'))).toHaveLength(2); // every member still runs: never two down

    rmSync(join(sb.dir, 'SICKEN'));
    for (const m of sb.spec().members) rmSync(join(m.dataDir, 'CONDITIONS.json'), { force: true });
    const again = await sb.kv(...argv, '--json');
    expect(again.code, again.stderr).toBe(0);
    expect(again.json()).toMatchObject({ status: 'done', resumed: true });
    for (const v of await versions()) expect(v.cluster).toBe('3.3.0');
  });

  it('a member that exits right after its start (3.3 refuses a numeric auto-compaction-retention) halts at once, not after the healthy timeout; roll-back restarts it on 3.2', async () => {
    const eps = sb
      .spec()
      .members.map((m) => m.endpoint)
      .join(',');
    const tpl = (verb: string, extra = '') => `"${process.execPath}" ${KVCTL} ${verb} {name}${extra}`;
    const drv = ['--endpoints', eps, '--stop-cmd', tpl('stop'), '--start-cmd', tpl('start', ' {version}'), '--running-cmd', tpl('running')];
    const up = [...drv, '--no-backup'];
    writeFileSync(join(sb.dir, 'CONFIG-FILE'), 'auto-compaction-mode: periodic\nauto-compaction-retention: 24\n');
    // The healthy timeout is far beyond the test's own timeout: only a halt at once passes.
    const r = await sb.kv('upgrade', '--to', '3.3', '--yes', ...up, ...FAST, '--healthy-timeout', '10m', '--settle', '0s');
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/kv\d did not become healthy on 3.3: kv\d's process exited after its start/);
    expect(sb.logs()).toMatch(/auto-compaction-retention must be a string in 3.3/);
    expect(r.stderr).toMatch(/Roll back with: +opsctl kv rollback --endpoints/);
    const rb = await sb.kv('rollback', ...drv, ...FAST);
    expect(rb.code, rb.stderr).toBe(0);
    for (const v of await versions()) expect(v.server).toMatch(/^3\.2\./);
    expect((await sb.kv('health')).code).toBe(0);
  });

  it('with a cluster file (YAML); a halt prints the roll-back command for that file', async () => {
    const file = join(sb.dir, 'cluster.yaml');
    const q = (s: string) => JSON.stringify(s);
    const lines = [
      'members:',
      ...sb.spec().members.map((m) => `  - { name: ${m.name}, endpoint: ${m.endpoint}, host: 127.0.0.1 }`),
      'driver:',
      '  type: command',
      `  stop: ${q(`"${process.execPath}" ${KVCTL} stop {name}`)}`,
      `  start: ${q(`"${process.execPath}" ${KVCTL} start {name} {version}`)}`,
      `  running: ${q(`"${process.execPath}" ${KVCTL} running {name}`)}`,
    ];
    writeFileSync(file, `${lines.join('\n')}\n`);
    sb.fault({ neverHealthyOn: '3.3' });
    const r = await sb.kv('upgrade', '--to', '3.3', '--yes', '--no-backup', '--cluster', file, ...FAST, '--healthy-timeout', '2s');
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/did not become healthy on 3.3/);
    expect(/Roll back with: +(.*)/.exec(r.stderr)![1]).toBe(`opsctl kv rollback --cluster ${file}`);
    expect((await versions()).filter((v) => v.server.startsWith('3.3'))).toHaveLength(1);
    const rb = await sb.kv('rollback', '--cluster', file, ...FAST);
    expect(rb.code, rb.stderr).toBe(0);
    expect(rb.stderr).toMatch(/rolled back kv\d → 3.2/);
    for (const v of await versions()) expect(v.server).toMatch(/^3\.2\./);
  });
});

describe('kv upgrade: more refusals', () => {
  it('refuses to start afresh over an unreadable journal (it may be all that says which members moved)', async () => {
    const key = clusterKey(sb.spec().members.map((m) => m.endpoint));
    const file = join(sb.dir, 'data', 'kv', 'journals', `${key}.json`);
    mkdirSync(join(sb.dir, 'data', 'kv', 'journals'), { recursive: true });
    writeFileSync(file, '{"version": 1, "steps": [');
    const r = await sb.kv('upgrade', '--to', '3.3', '--yes', ...FAST);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/the kv upgrade journal .* cannot be used: not JSON/);
    expect(r.stderr).toMatch(/move the file aside \(mv /);
    expect(readFileSync(file, 'utf8')).toBe('{"version": 1, "steps": [');
    for (const v of await versions()) expect(v.server).toMatch(/^3\.2\./);
  });

  it('refuses while an alarm is raised', async () => {
    sb.fault({ alarm: 'NOSPACE' });
    const r = await sb.kv('upgrade', '--to', '3.3', '--yes', ...FAST);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/alarm NOSPACE raised on member \d+/);
  });

  it('refuses a second upgrade of the same cluster while one runs', async () => {
    const run = inProcess(['kv', 'upgrade', '--to', '3.3', '--yes', ...FAST, '--settle', '30s'], sb.env);
    await until(() => sb.journal()?.steps.some((s: any) => s.kind === 'wait-healthy' && s.status === 'done'), 30_000, 'the first member back');
    const second = await sb.kv('upgrade', '--to', '3.3', '--yes', ...FAST);
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/another kv upgrade of this cluster is running \(pid \d+/);
    run.interrupt();
    expect(await run.exited).toBe(130);
  });
});
