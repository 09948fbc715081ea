import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startCluster, type KvSandbox } from '../framework/index.js';

const FAST = ['--poll-interval', '50ms', '--healthy-timeout', '30s', '--stop-timeout', '20s', '--settle', '0s', '--yes'];
const KVCTL = new URL('../fixtures/kvctl.mjs', import.meta.url).pathname;
const KiB = 1024;

/**
 * Issue 27, item 5, the command driver: the backup runs on each member's host, so its space is
 * measured there (the space template's `du -sk` then `df -Pk`, through a FAKE ssh first on the PATH
 * that logs its argv and runs its remote command with sh -c, as sshd does), before any stop; a backup
 * command that fails after the stop brings the member back on its old binary and halts naming the
 * host, the path and the space needed.
 */
describe('kv upgrade, command driver: the backup space on the member host (issue 27)', () => {
  let sb: KvSandbox;
  let bin: string;

  beforeEach(async () => {
    sb = (await startCluster({ members: 'simulated', size: 3, version: '3.2' })).sandbox;
    bin = join(sb.dir, 'bin');
    mkdirSync(join(bin, 'log'), { recursive: true });
    // FAKE ssh: logs its argv (NUL-separated), drops `--` and the host, runs the rest with sh -c.
    writeFileSync(
      join(bin, 'ssh'),
      `#!/bin/sh\n{ for a in "$@"; do printf '%s\\0' "$a"; done; } >"${bin}/log/$(date +%s%N).$$"\n[ "$1" = -- ] && shift\nshift\nexec sh -c "$*"\n`,
    );
    // The host's view: du -sk of the member's real data dir, then df -Pk with the free KiB the test sets
    // (FREE-KIB; after the pre-flight's three calls, FREE-LATE-KIB when present), on a mount with a blank.
    for (const m of sb.spec().members) writeFileSync(join(bin, `dir-${m.name}`), m.dataDir);
    writeFileSync(
      join(bin, 'space.sh'),
      [
        'd=$(dirname "$0")',
        'n=$(($(cat "$d/count" 2>/dev/null || echo 0) + 1)); echo $n >"$d/count"',
        'free=$(cat "$d/FREE-KIB"); [ $n -gt 3 ] && [ -f "$d/FREE-LATE-KIB" ] && free=$(cat "$d/FREE-LATE-KIB")',
        'du -sk "$(cat "$d/dir-$1")"',
        'echo "Filesystem     1024-blocks      Used Available Capacity Mounted on"',
        'echo "/dev/fake0      104857600  1000 $free 1% /srv/etcd data"',
        '',
      ].join('\n'),
    );
    writeFileSync(join(bin, 'backup-full.sh'), 'echo "cp: error writing \'$1.bak-$2/member/snap/db\': No space left on device" >&2\nexit 1\n');
    for (const f of ['ssh', 'space.sh', 'backup-full.sh']) chmodSync(join(bin, f), 0o755);
    (sb.env as Record<string, string>).PATH = `${bin}:${process.env.PATH}`;
  });
  afterEach(async () => {
    await sb.down();
  });

  const tpl = (verb: string, extra = '') => `"${process.execPath}" ${KVCTL} ${verb} {name}${extra}`;
  const eps = () =>
    sb
      .spec()
      .members.map((m) => m.endpoint)
      .join(',');
  const driver = (backup = tpl('backup', ' {run}')) => [
    '--endpoints',
    eps(),
    '--stop-cmd',
    tpl('stop'),
    '--start-cmd',
    tpl('start', ' {version}'),
    '--running-cmd',
    tpl('running'),
    '--backup-cmd',
    backup,
  ];
  const spaceCmd = () => ['--space-cmd', `ssh {host} ${join(bin, 'space.sh')} {name}`];
  const sshCalls = () =>
    readdirSync(join(bin, 'log'))
      .sort()
      .map((f) =>
        readFileSync(join(bin, 'log', f), 'utf8')
          .split('\0')
          .slice(0, -1),
      );
  const versions = async () => (await sb.kv('version', '--json')).json<Array<{ name: string; server: string }>>().map((v) => v.server);

  it('too little free on a host: refused at pre-flight (exit 1) naming the host, path, needed and free; nothing stopped', async () => {
    writeFileSync(join(bin, 'FREE-KIB'), String(10 * KiB)); // 10 MiB: under the 64 MiB margin alone
    const r = await sb.kv('upgrade', '--to', '3.3', ...driver(), ...spaceCmd(), ...FAST);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/too little free space for the data-dir backups on 127\.0\.0\.1:\/srv\/etcd data: /);
    expect(r.stderr).toMatch(
      /the backups of 127\.0\.0\.1:\S+ \d+(\.\d)? KiB, .* need 64(\.\d)? MiB free with the margin \(10% and 64 MiB\), 10 MiB is free; fix: free space on 127\.0\.0\.1, or pass --no-backup/,
    );
    expect(sb.journal()).toBeUndefined();
    expect((await versions()).map((v) => v.replace(/\.\d+$/, ''))).toEqual(['3.2', '3.2', '3.2']);
    // The template's values reached ssh as single arguments (the member name its own word).
    const calls = sshCalls();
    for (const c of calls) expect(c.slice(0, 3)).toEqual(['--', '127.0.0.1', join(bin, 'space.sh')]);
    expect(calls.map((c) => c.slice(3)).sort()).toEqual(
      sb
        .spec()
        .members.map((m) => [m.name])
        .sort(),
    );
  }, 120_000);

  it('space gone between pre-flight and a stop: halted (exit 3) before the stop, the member untouched', async () => {
    writeFileSync(join(bin, 'FREE-KIB'), String(100 * 1024 * KiB));
    writeFileSync(join(bin, 'FREE-LATE-KIB'), String(1 * KiB));
    const r = await sb.kv('upgrade', '--to', '3.3', ...driver(), ...spaceCmd(), ...FAST);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(
      /not stopping kv\d: too little free space for its data-dir backup: 127\.0\.0\.1:\/srv\/etcd data needs 6\d(\.\d)? MiB free \(a backup of 127\.0\.0\.1:\S+ takes \d+(\.\d)? KiB, plus 10% and 64 MiB margin\), 1 MiB is free/,
    );
    expect(r.stderr).toMatch(/1 MiB is free; kv\d was not touched/);
    const j = sb.journal();
    expect(j.steps.filter((s: any) => s.kind === 'stop').map((s: any) => s.status)).toEqual(['pending', 'pending', 'pending']);
    expect((await versions()).map((v) => v.replace(/\.\d+$/, ''))).toEqual(['3.2', '3.2', '3.2']);
    for (const m of sb.spec().members) expect(existsSync(`${m.dataDir}.bak-${j.id}`)).toBe(false);
  }, 120_000);

  it('the backup command fails after the stop (ENOSPC on the host): back on 3.2, halted (exit 3) naming the host, path and space needed', async () => {
    writeFileSync(join(bin, 'FREE-KIB'), String(100 * 1024 * KiB));
    const r = await sb.kv('upgrade', '--to', '3.3', ...driver(`ssh {host} ${join(bin, 'backup-full.sh')} {name} {run}`), ...spaceCmd(), ...FAST);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(
      /copying kv\d's data dir failed after its stop: .*No space left on device; 127\.0\.0\.1:\/srv\/etcd data needs 6\d(\.\d)? MiB free/,
    );
    expect(r.stderr).toMatch(/kv\d was started again on 3\.2 and is healthy, the cluster healthy/);
    const j = sb.journal();
    expect(j.status).toBe('halted');
    expect(j.steps.filter((s: any) => s.kind === 'stop').map((s: any) => s.status)).toEqual(['pending', 'pending', 'pending']);
    expect((await versions()).map((v) => v.replace(/\.\d+$/, ''))).toEqual(['3.2', '3.2', '3.2']);
  }, 120_000);

  it('a space template whose output is not du/df: refused at pre-flight (exit 1) naming the command and what was expected', async () => {
    const r = await sb.kv('upgrade', '--to', '3.3', ...driver(), '--space-cmd', 'ssh {host} echo hello', ...FAST);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(
      /measuring the space for the data-dir backups failed: the space template's output \(`ssh -- 127\.0\.0\.1 echo hello`\) cannot be read: not a `du -sk` line/,
    );
    expect(sb.journal()).toBeUndefined();
  }, 120_000);

  it('no space template: the plan says the backup space is not checked (never silent)', async () => {
    const r = await sb.kv('upgrade', '--to', '3.3', ...driver(), ...FAST, '--dry-run');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/backup space not checked: the command driver's backup runs on each member's host/);
    expect(r.stdout).toMatch(/--space-cmd/);
    // With a space template nothing is said; the dry run's pre-flight measures (a read) as the real run's does.
    writeFileSync(join(bin, 'FREE-KIB'), String(100 * 1024 * KiB));
    const r2 = await sb.kv('upgrade', '--to', '3.3', ...driver(), ...spaceCmd(), ...FAST, '--dry-run');
    expect(r2.code, r2.stderr).toBe(0);
    expect(r2.stdout).not.toMatch(/backup space not checked/);
    expect(readFileSync(join(bin, 'count'), 'utf8').trim()).toBe('3');
  }, 120_000);

  it('cluster file: the systemd preset with dataDir measures with the real du -sk and df -Pk on the host; driver.space is checked as a template', async () => {
    const members = sb.spec().members.map((m) => ({ name: m.name, endpoint: m.endpoint }));
    const file = join(sb.dir, 'cluster.json');
    writeFileSync(
      file,
      JSON.stringify({ members, driver: { type: 'systemd', sudo: false, dataDir: `${dirname(dirname(sb.spec().members[0]!.dataDir))}/{name}/data` } }),
    );
    const r = await sb.kv('upgrade', '--to', '3.3', '--cluster', file, ...FAST, '--dry-run');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(/backup space not checked/);
    const calls = sshCalls().filter((c) => c[2] === 'du');
    const at = dirname(dirname(sb.spec().members[0]!.dataDir));
    expect(calls.sort()).toEqual(
      sb
        .spec()
        .members.map((m) => ['--', '127.0.0.1', 'du', '-sk', `${at}/${m.name}/data`, '&&', 'df', '-Pk', `${at}/${m.name}`])
        .sort(),
    );
    const bad = join(sb.dir, 'bad.json');
    writeFileSync(
      bad,
      JSON.stringify({ members, driver: { type: 'command', stop: 'x', start: 'x', running: 'x', backup: 'x', space: 'ssh {host} df -Pk {nope}' } }),
    );
    const r2 = await sb.kv('upgrade', '--to', '3.3', '--cluster', bad, ...FAST, '--dry-run');
    expect(r2.code).toBe(2);
    expect(r2.stderr).toMatch(/driver\.space: unknown placeholder \{nope\}/);
  }, 120_000);
});
