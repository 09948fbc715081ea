import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { fakeSshScript } from '../helpers/fake-ssh.js';
import { startCluster, type SimulatedTestCluster } from '../framework/index.js';

/**
 * The command driver's stage template (--stage-cmd, driver.stage), through the built binary: a
 * command-driver cluster whose members are a simulated sandbox's, reached by a FAKE ssh first on the
 * PATH (it logs its argv in order and runs the remote command with sh -c). The stage runs on every
 * member, with the hop's {version} and {bin}, before the first stop; a stage that fails, or whose
 * binary is of another version, refuses with nothing stopped.
 */
describe('kv upgrade --stage-cmd: the binary staged and checked on every host before the first stop (built binary, fake ssh)', () => {
  const T = mkdtempSync(join(tmpdir(), 'opsctl-kv-stage-'));
  const BIN = join(T, 'bin');
  const LOG = join(T, 'ssh-log');
  const cfg = tempConfigDir('opsctl-kv-stage-cfg-');
  const env = { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1', PATH: `${BIN}:${process.env.PATH ?? '/usr/bin:/bin'}` };
  const opsctl = (...args: string[]) => runBin(args, { env, timeout: 180_000 });
  let endpoints = '';
  let c: SimulatedTestCluster | undefined;
  /** Each ssh call's remote command, in the order they ran. */
  const calls = () =>
    readdirSync(LOG)
      .sort()
      .map((f) => readFileSync(join(LOG, f), 'utf8').split('\0').slice(0, -1).join(' '));

  beforeAll(async () => {
    for (const d of [BIN, LOG]) mkdirSync(d);
    writeFileSync(join(BIN, 'ssh'), fakeSshScript('kv-stage', `{ for a in "$@"; do printf '%s\\0' "$a"; done; } >"${LOG}/$(date +%s%N).$$"`));
    chmodSync(join(BIN, 'ssh'), 0o755);
    c = await startCluster({ members: 'simulated', size: 3, version: '3.2', configDir: cfg.dir });
    const st = JSON.parse(String((await opsctl('kv', 'status', '--json')).stdout)) as Array<{ endpoint: string }>;
    endpoints = st.map((m) => m.endpoint).join(',');
  }, 300_000);

  afterAll(async () => {
    await c?.destroy();
    rmSync(T, { recursive: true, force: true });
    cfg.cleanup();
  }, 300_000);

  const upgrade = (stage: string) =>
    opsctl(
      'kv',
      'upgrade',
      '--endpoints',
      endpoints,
      '--to',
      '3.3',
      '--yes',
      '--no-backup',
      '--stop-cmd',
      'ssh {host} sh -c "echo stop {name}; exit 1"',
      '--start-cmd',
      'ssh {host} true start {name}',
      '--running-cmd',
      'ssh {host} true running {name}',
      '--stage-cmd',
      stage,
    );

  it('a stage whose binary is of another version, or that prints no version: refused naming each member, no stop ran', async () => {
    for (const f of readdirSync(LOG)) rmSync(join(LOG, f));
    const wrong = await upgrade('ssh {host} sh -c "echo staged {name} {version} {bin}; echo etcd Version: 3.2.32"');
    expect(wrong.exitCode, String(wrong.stderr)).toBe(1);
    expect(String(wrong.stderr)).toMatch(/upgrade refused before any change/);
    expect(String(wrong.stderr)).toMatch(/member kv\d: staging its 3\.3 binary failed: .*the staged etcd is 3\.2\.32, not 3\.3\.x/);
    expect(String(wrong.stderr)).toMatch(/nothing was stopped/);
    const seen = calls();
    expect(seen.filter((c) => /staged kv\d 3\.3/.test(c))).toHaveLength(3);
    expect(seen.filter((c) => /echo stop/.test(c))).toEqual([]);

    for (const f of readdirSync(LOG)) rmSync(join(LOG, f));
    const silent = await upgrade('ssh {host} sh -c "echo fetched {version}"');
    expect(silent.exitCode).toBe(1);
    expect(String(silent.stderr)).toMatch(/printed no "etcd Version:" line: the stage template must end with the staged binary's --version/);
    expect(calls().filter((c) => /echo stop/.test(c))).toEqual([]);
  }, 300_000);

  it('a good stage runs on every member with {version} before the first stop', async () => {
    for (const f of readdirSync(LOG)) rmSync(join(LOG, f));
    const r = await upgrade('ssh {host} sh -c "echo staged {name} {version}; echo etcd Version: 3.3.27"');
    // (the stop template here fails on purpose: the run halts at its first stop, exit 3)
    expect(r.exitCode, String(r.stderr)).toBe(3);
    expect(String(r.stderr)).toMatch(/stage: kv\d: staged etcd 3\.3\.27/);
    const seen = calls();
    const firstStop = seen.findIndex((c) => /echo stop/.test(c));
    expect(firstStop).toBeGreaterThan(0);
    const staged = seen.map((c, i) => [c, i] as const).filter(([c]) => /staged kv\d 3\.3/.test(c));
    expect(staged).toHaveLength(3);
    for (const [, i] of staged) expect(i).toBeLessThan(firstStop);
  }, 300_000);
});
