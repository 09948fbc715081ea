import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { etcdReleaseDirs } from '../helpers/etcd-releases.js';

/** A temp config dir and `opsctl kv …` through the built binary; `down()` stops its sandbox. */
function binSandbox() {
  const cfg = tempConfigDir('opsctl-kv-sbcfg-');
  const sandboxFile = join(cfg.dir, 'data', 'kv', 'sandbox', 'sandbox.json');
  const kv = async (...argv: string[]) => {
    const r = await execa(process.execPath, [BIN, 'kv', ...argv], {
      reject: false,
      env: { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1' },
      timeout: 180_000,
    });
    return { code: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr), json: () => JSON.parse(String(r.stdout)) };
  };
  const spec = () => JSON.parse(readFileSync(sandboxFile, 'utf8')) as Spec;
  return {
    dir: cfg.dir,
    kv,
    spec,
    logs: () =>
      spec()
        .members.map((m) => (existsSync(m.logFile) ? readFileSync(m.logFile, 'utf8') : ''))
        .join(''),
    async down() {
      if (existsSync(sandboxFile)) await kv('sandbox', 'down');
      cfg.cleanup();
    },
  };
}

/** The line of `key:` in a member's config file (1-based), as the check must name it. */
function lineOf(file: string, key: string): number {
  return (
    readFileSync(file, 'utf8')
      .split('\n')
      .findIndex((l) => l.startsWith(`${key}:`)) + 1
  );
}

type Spec = { members: Array<{ name: string; pidFile: string; configFile: string; logFile: string }> };
const pids = (spec: Spec) => spec.members.map((m) => readFileSync(m.pidFile, 'utf8').trim());

describe('kv sandbox up --config: a config file per member, read by the 3.3 configuration check (built binary)', () => {
  let sb = binSandbox();
  afterEach(async () => {
    await sb.down();
    sb = binSandbox();
  });
  afterAll(() => sb.down());

  it('a numeric auto-compaction-retention on kv2 (3.2 starts with it) halts kv upgrade --to 3.3 with exit 1 before any stop, naming member, file, line and fix', async () => {
    const up = await sb.kv(
      'sandbox',
      'up',
      '--members',
      '3',
      '--version',
      '3.2',
      '--config',
      'auto-compaction-mode=periodic',
      '--config',
      'kv2:auto-compaction-retention=1',
    );
    expect(up.code, up.stderr).toBe(0);
    const spec = sb.spec();
    const kv2 = spec.members.find((m) => m.name === 'kv2')!;
    expect(readFileSync(kv2.configFile, 'utf8')).toMatch(/^auto-compaction-retention: 1$/m);
    // The other members do not get kv2's setting; every member gets the one for all.
    for (const m of spec.members) expect(readFileSync(m.configFile, 'utf8')).toMatch(/^auto-compaction-mode: periodic$/m);
    expect(readFileSync(spec.members[0]!.configFile, 'utf8')).not.toMatch(/auto-compaction-retention/);
    // The member really runs from its file (its command line names it).
    const pid = readFileSync(kv2.pidFile, 'utf8').trim();
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')).toContain(kv2.configFile);
    const before = pids(spec);

    const r = await sb.kv('upgrade', '--to', '3.3', '--yes');
    expect(r.code, r.stderr).toBe(1);
    const line = lineOf(kv2.configFile, 'auto-compaction-retention');
    expect(line).toBeGreaterThan(0);
    expect(r.stderr).toContain(`member kv2: ${kv2.configFile}:${line}: auto-compaction-retention is the number 1: 3.3 reads a string`);
    expect(r.stderr).toMatch(/fix: give the 3\.3 member auto-compaction-retention: "1"/);
    expect(r.stderr).toMatch(/nothing was stopped/);
    expect(r.stderr).not.toMatch(/member kv[13]:/);
    // Nothing was touched: the same processes, all healthy on 3.2.
    expect(pids(sb.spec())).toEqual(before);
    const st = await sb.kv('sandbox', 'status', '--json');
    for (const m of st.json() as Array<{ running: boolean; healthy: boolean; server: string }>)
      expect(m).toMatchObject({ running: true, healthy: true, server: '3.2.32' });
  });

  it('a quoted retention stops a 3.2 member at its start (as 3.2.32 does), at once; max-request-bytes from the file is honoured and the upgrade finishes', async () => {
    const up = await sb.kv('sandbox', 'up', '--members', '3', '--config', 'auto-compaction-retention="24h"', '--config', 'max-request-bytes=1024');
    // 3.2 reads auto-compaction-retention into an int: a quoted value stops it at its start.
    expect(up.code).toBe(1);
    expect(up.stderr).toMatch(/member kv\d exited after its start \(its log: .*kv\d\.log; its config: .*kv\d\.conf\.yml\)/);
    expect(sb.logs()).toMatch(/cannot unmarshal string into Go struct field configYAML\.auto-compaction-retention of type int/);
    await sb.kv('sandbox', 'down');

    const up2 = await sb.kv('sandbox', 'up', '--members', '3', '--config', 'max-request-bytes=1024');
    expect(up2.code, up2.stderr).toBe(0);
    const big = await sb.kv('put', 'big', 'x'.repeat(2000));
    expect(big.code).not.toBe(0);
    expect(big.stderr).toMatch(/too large|request is too large|1024/i);
    expect((await sb.kv('put', 'small', 'v')).code).toBe(0);
    const r = await sb.kv('upgrade', '--to', '3.3', '--yes', '--settle', '0s');
    expect(r.code, r.stderr).toBe(0);
    expect((await sb.kv('get', 'small')).stdout).toContain('v');
  });

  it('bad --config input exits 2 naming the setting and the fix, and starts nothing', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--config', 'auto-compaction-retention'], /--config: "auto-compaction-retention" is not \[MEMBER:\]KEY=VALUE/],
      [['--config', 'kv9:auto-compaction-retention=1'], /--config: no member kv9 in a 3-member sandbox/],
      [['--config', 'data-dir=/tmp/x'], /--config: data-dir is set by the sandbox itself/],
      [['--config', 'auto-compaction-retention=[1, 2]'], /--config: the value of auto-compaction-retention \("\[1, 2\]"\) is not one YAML value/],
      [['--config', 'auto-compaction-retention='], /is not one YAML value/],
    ];
    for (const [args, msg] of cases) {
      const r = await sb.kv('sandbox', 'up', ...args);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(msg);
      expect(existsSync(join(sb.dir, 'data', 'kv', 'sandbox'))).toBe(false);
    }
  });
});

const releases = etcdReleaseDirs();
describe.runIf(releases)('kv sandbox up --etcd-bin (real etcd 3.2.32) --config: the check reads the same files real etcd starts from', () => {
  const sb = binSandbox();
  const kv = sb.kv;
  afterAll(() => sb.down());

  it('3.2.32 starts with a numeric auto-compaction-retention; kv upgrade --to 3.3 --target-bin 3.3.27 halts with exit 1 before any stop', async () => {
    const up = await kv('sandbox', 'up', '--etcd-bin', releases!.v32, '--config', 'kv3:auto-compaction-retention=1');
    expect(up.code, up.stderr).toBe(0);
    const spec = sb.spec();
    const kv3 = spec.members.find((m) => m.name === 'kv3')!;
    const pid = readFileSync(kv3.pidFile, 'utf8').trim();
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0$/, '').split('\0')).toEqual([join(releases!.v32, 'etcd'), '--config-file', kv3.configFile]);
    const before = pids(spec);
    const r = await kv('upgrade', '--to', '3.3', '--yes', '--target-bin', releases!.v33);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(
      `member kv3: ${kv3.configFile}:${lineOf(kv3.configFile, 'auto-compaction-retention')}: auto-compaction-retention is the number 1`,
    );
    expect(pids(spec)).toEqual(before);
    const st = await kv('sandbox', 'status', '--json');
    for (const m of st.json() as Array<{ running: boolean; healthy: boolean; server: string }>)
      expect(m).toMatchObject({ running: true, healthy: true, server: '3.2.32' });
  });
});
