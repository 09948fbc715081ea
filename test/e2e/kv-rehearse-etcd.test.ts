import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { etcdLadderDirs } from '../helpers/etcd-releases.js';
import { until } from '../helpers/kv.js';
import { execa } from 'execa';
import { startCluster, type SimulatedTestCluster } from '../framework/index.js';

/**
 * Issue 56 (kv-rehearse), on real binaries through the built binary: a fresh default 3.5.35 sandbox goes
 * to 3.7.3 in ONE command. Before the first stop the whole plan (3.5 → 3.6, the WAL fix before 3.7,
 * 3.6 → 3.7) runs on a clone of the cluster (its members' files copied; opsctl's own upgrade in namespaces
 * of its own, with a writer and a /health probe on the clone): the chained per-member data trial refused
 * this path ("unmarshal should never fail"), the clone does what the cluster will. `--rehearse` runs it
 * alone and changes nothing; a kill -9 during the rehearsal leaves no process of the clone and the
 * identical command finishes, with a writer on the cluster: 0 acknowledged writes lost.
 */
const dirs = etcdLadderDirs();

describe.runIf(dirs)('kv upgrade: the whole plan rehearsed on a clone of the cluster (real 3.5.35 → 3.7.3)', () => {
  const { dir, cleanup } = tempConfigDir('opsctl-kv-rehearse-');
  // (a temp dir of this file's own: the clone's copy is made there, and no other file's rehearsal is counted as left behind)
  const tmp = join(dir, 'tmp');
  mkdirSync(tmp, { recursive: true });
  const env = { OPSCTL_CONFIG_DIR: dir, TMPDIR: tmp };
  const opsctl = (...args: string[]) => runBin(args, { env, timeout: 600_000 });
  const TO_37 = ['kv', 'upgrade', '--to', '3.7', '--target-bin', `3.6=${dirs?.v36}`, '--target-bin', `3.7=${dirs?.v37}`, '--poll-interval', '100ms'];
  let members: Array<{ name: string; endpoint: string; configFile: string }> = [];
  const versions = async () => {
    const r = await opsctl('kv', 'version', '--json');
    return (JSON.parse(String(r.stdout)) as Array<{ server: string }>).map((v) => v.server);
  };
  /** The etcd processes that run a member's config file: the cluster's, and the clone's (the same paths, in its mount namespace). */
  const etcds = () =>
    readdirSync('/proc')
      .filter((p) => /^\d+$/.test(p))
      .filter((p) => {
        try {
          const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8');
          // (an etcd started with a member's config file: not the copy's own cp or sh, which name the files they copy)
          return /(^|\/)etcd$/.test(cmd.split('\0')[0]!) && members.some((m) => cmd.includes(m.configFile));
        } catch {
          return false;
        }
      }).length;
  const leftovers = () => readdirSync(tmp).filter((f) => f.startsWith('opsctl-rehearsal-'));

  let c: SimulatedTestCluster | undefined;

  beforeAll(async () => {
    c = await startCluster({ members: 'simulated', size: 3, etcdBin: dirs!.v35, configDir: dir });
    members = JSON.parse(readFileSync(join(dir, 'data', 'kv', 'sandbox', 'sandbox.json'), 'utf8')).members;
  }, 300_000);
  afterAll(async () => {
    await c?.destroy();
    cleanup();
  }, 300_000);

  it('--rehearse: the whole ladder passes on the clone, under its writer and /health probe; the cluster is untouched, nothing left behind', async () => {
    const before = leftovers();
    // a copy over --rehearsal-max-copy pauses no member: --rehearse refuses, naming the size; nothing was copied
    const big = await opsctl(...TO_37, '--rehearse', '--rehearsal-max-copy', '1MB');
    expect(big.exitCode, String(big.stderr)).toBe(1);
    // (the plan then stands on each member's own trials: here the chained data trial's refusal of 3.6 → 3.7)
    expect(String(big.stdout) + String(big.stderr)).toMatch(
      /rehearsal: not run \(its copy would read [\d.]+ MiB with every member paused at once, over --rehearsal-max-copy 1 MiB/,
    );
    expect(leftovers()).toEqual(before);
    const r = await opsctl(...TO_37, '--rehearse', '--debug');
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const err = String(r.stderr);
    // the clone's plan took what this run read of the same data (each member's etcdutl check v2store), not read again of its copy
    expect(err).toMatch(/clone: debug \[kv\] 3\.5 → 3\.6: the members' data as the run that rehearses read it for its plan \(v2store\), not read again/);
    expect(err).toMatch(
      /rehearsal: passed on a clone of the cluster in [\d.]+ s \(copy [\d.]+ s\): 3\.5 → 3\.6, 3\.6 → 3\.7, (\d+) writes acknowledged, 0 lost, (\d+) \/health probes/,
    );
    // each hop's cluster version raised on the clone by a leader hand-off (etcd's check at a new term), said beside its time
    for (const to of ['3.6', '3.7'])
      expect(err).toMatch(new RegExp(`the clone at the wait for cluster version ${to.replace('.', '\\.')}: leadership handed from kv\\d to kv\\d`));
    expect(err).toMatch(/cluster version [\d.]+ s \(the clone's leader handed off; on the cluster up to 4 s more\)/);
    const [, writes, probes] = /(\d+) writes acknowledged, 0 lost, (\d+) \/health probes/.exec(err)!;
    expect(Number(writes)).toBeGreaterThan(0);
    expect(Number(probes)).toBeGreaterThan(0);
    // the chained data trial is not what judges the data (it refused this path: "unmarshal should never fail")
    const out = String(r.stdout) + err;
    expect(out).not.toMatch(/\[data-trial\] refuse/);
    expect(out).toMatch(/\[data-trial\] ok on kv1, kv2, kv3: proven by the rehearsal/);
    expect(out).toMatch(/--rehearse: the clone is removed; nothing was changed on the cluster/);
    expect(await versions()).toEqual(['3.5.35', '3.5.35', '3.5.35']);
    expect(etcds()).toBe(3);
    expect(leftovers()).toEqual(before);
    // the verdict kept: a run of the same plan reuses it (nothing it proved changed), and says so on the plan
    const dry = await opsctl(...TO_37, '--dry-run');
    expect(dry.exitCode, String(dry.stderr)).toBe(0);
    expect(String(dry.stdout) + String(dry.stderr)).toMatch(
      /rehearsal: passed \d+ min ago \([^)]*3\.5 → 3\.6, 3\.6 → 3\.7, [\d.]+ s\), reused: the members, their start settings and the hop binaries are unchanged \(valid 720 min; --rehearsal-valid 0 rehearses again\)/,
    );
    // and no trial start runs again: the kept rehearsal's clone started every member with these settings on each hop
    expect(String(dry.stdout)).toMatch(
      /Trials: 0 of 6 starts with each member's settings ran \(not run: 6 proven by the rehearsal on a clone of the cluster instead\)/,
    );
    expect(String(dry.stdout)).toMatch(/\[trial-start\] ok on kv1, kv2, kv3: proven by the rehearsal/);
  }, 600_000);

  it('kill -9 during the rehearsal: no process of the clone outlives opsctl; the identical command rehearses and runs to 3.7.3 with 0 writes lost', async () => {
    // (--rehearsal-valid 0: the first test's verdict is not reused; this one rehearses again)
    const child = execa(process.execPath, [BIN, ...TO_37, '--yes', '--rehearsal-valid', '0', '--debug'], {
      env: { ...process.env, ...env },
      reject: false,
      all: true,
    });
    let seen = '';
    child.all.on('data', (b: Buffer) => (seen += b.toString()));
    // the clone's members running beside the cluster's (the same config files, in the clone's namespaces)
    await until(() => etcds() > 3, 300_000, "the clone's members started");
    expect(seen).toMatch(/rehearsal: copied/);
    child.kill('SIGKILL');
    await child;
    await until(() => etcds() === 3, 60_000, "the clone's processes gone with opsctl");
    expect(await versions()).toEqual(['3.5.35', '3.5.35', '3.5.35']);
    // (its copy could not be removed by a process killed -9: the next rehearsal removes it)
    expect(leftovers()).toHaveLength(1);

    // a writer on the cluster for the whole identical command
    let stop = false;
    const acked: string[] = [];
    const writer = (async () => {
      for (let i = 0; !stop; i++) {
        const key = `w/${i}`;
        const m = members[i % members.length]!;
        const ok = await fetch(`${m.endpoint}/v3/kv/put`, {
          method: 'POST',
          body: JSON.stringify({ key: Buffer.from(key).toString('base64'), value: Buffer.from(String(i)).toString('base64') }),
          signal: AbortSignal.timeout(2000),
        }).then(
          (res) => res.ok,
          () => false,
        );
        if (ok) acked.push(key);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    const r = await opsctl(...TO_37, '--yes', '--rehearsal-valid', '0', '--json');
    stop = true;
    await writer;
    expect(r.exitCode, String(r.stderr)).toBe(0);
    // the rehearsal's own account in the report: its time from its start to its verdict, the copy's part, its load
    const { rehearsed: rehearsal } = JSON.parse(String(r.stdout)) as {
      rehearsed?: { ms: number; copyMs: number; writes: { acked: number; lost: number }; probes: number };
    };
    expect(rehearsal?.ms).toBeGreaterThan(rehearsal!.copyMs);
    expect(rehearsal!.copyMs).toBeGreaterThan(0);
    expect(rehearsal!.writes.lost).toBe(0);
    expect(rehearsal!.writes.acked).toBeGreaterThan(0);
    expect(rehearsal!.probes).toBeGreaterThan(0);
    expect(await versions()).toEqual(['3.7.3', '3.7.3', '3.7.3']);
    const keys = execFileSync(join(dirs!.v37, 'etcdctl'), ['--endpoints', members.map((m) => m.endpoint).join(','), 'get', 'w/', '--prefix', '--keys-only'], {
      env: { PATH: '/usr/bin:/bin' },
    })
      .toString()
      .split('\n')
      .filter(Boolean);
    expect(acked.length).toBeGreaterThan(10);
    expect(acked.filter((k) => !keys.includes(k))).toEqual([]);
    expect(etcds()).toBe(3);
    expect(leftovers()).toEqual([]);
  }, 900_000);
});
