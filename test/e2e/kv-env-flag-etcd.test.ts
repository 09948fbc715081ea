import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { startCluster, type RealTestCluster } from '../framework/index.js';
import { etcdLadderDirs } from '../helpers/etcd-releases.js';

/**
 * A variable is not its flag: etcd reads an ETCD_* variable only for a flag it still defines, so the
 * variable of a removed flag is ignored with a warning ("unrecognized environment variable") where the
 * flag stops it ("flag provided but not defined"). Measured on 3.6.16 with ETCD_ENABLE_V2=true: it
 * starts. Real 3.5.35 members started from flags and variables (as a unit's ExecStart and Environment=
 * would), through the command driver: the variable is not refused and the members go to 3.6.16 with it
 * in their environment; `--enable-v2` as a flag is still refused, by the rule and by 3.6.16's own trial start.
 */
const dirs = etcdLadderDirs();

describe.runIf(Boolean(dirs))('ETCD_ENABLE_V2 and --enable-v2 on the way to 3.6 (real etcd 3.5.35 → 3.6.16)', () => {
  const cfg = tempConfigDir('opsctl-env-flag-');
  const env = { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1' };
  const opsctl = (...args: string[]) => runBin(args, { env, timeout: 300_000 });
  const made: RealTestCluster[] = [];
  const up = async (size: number, flags: () => { args: string[]; env?: Record<string, string> }) => {
    const c = await startCluster({
      members: 'real',
      size,
      version: '3.5',
      bins: { '3.5': dirs!.v35, '3.6': dirs!.v36 },
      flags,
      configDir: cfg.dir,
      file: (real) => ({ name: `cluster-${made.length + 1}.yaml`, extra: [`backup: cp -a ${real.dir}/{name}/data ${real.dir}/{name}/data.bak-{run}`] }),
    });
    made.push(c);
    return { c, file: c.file };
  };
  const environ = (c: RealTestCluster, m: RealTestCluster['members'][number]) => readFileSync(`/proc/${c.pid(m)}/environ`, 'utf8').split('\0');

  afterAll(async () => {
    for (const c of made) await c.destroy();
    cfg.cleanup();
  });

  let vars: { c: RealTestCluster; file: string };
  beforeAll(async () => {
    vars = await up(3, () => ({ args: [], env: { ETCD_ENABLE_V2: 'true' } }));
  }, 180_000);

  it('ETCD_ENABLE_V2=true: not refused (the plan says 3.6 ignores it); the hop runs and every member is on 3.6.16 with the variable still set', async () => {
    const { c, file } = vars;
    for (const m of c.members) expect(environ(c, m)).toContain('ETCD_ENABLE_V2=true');
    const dry = await opsctl('kv', 'upgrade', '--to', '3.6', '--dry-run', '--cluster', file, '--target-bin', `3.6=${dirs!.v36}`, '--json');
    expect(dry.exitCode, String(dry.stderr)).toBe(0);
    const rows = (JSON.parse(String(dry.stdout)) as { checks: Array<{ rule: string; member?: string; status: string; detail: string }> }).checks;
    const gone = rows.filter((x) => x.rule === 'enable-v2-gone');
    expect(gone.map((x) => [x.member, x.status])).toEqual(c.members.map((m) => [m.name, 'ok']));
    for (const x of gone)
      expect(x.detail).toMatch(/environment ETCD_ENABLE_V2 .*: ignored: etcd starts without it, warning "unrecognized environment variable"/);
    // 3.6.16 itself started with each member's settings, the variable among them (its trials)
    const trials = rows.filter((x) => x.rule === 'trial-start');
    expect(trials.map((x) => x.status)).toEqual(['ok', 'ok', 'ok']);
    for (const x of trials) expect(x.detail).toMatch(/etcd 3\.6\.16 started with its settings \(\d+ flags .*, 1 ETCD_\* variable /);
    expect(rows.filter((x) => x.status === 'refuse')).toEqual([]);

    const r = await opsctl('kv', 'upgrade', '--to', '3.6', '--yes', '--cluster', file, '--target-bin', `3.6=${dirs!.v36}`, '--settle', '0s', '--json');
    expect(r.exitCode, String(r.stderr)).toBe(0);
    // The first stop's snapshot: the leader's snapshot the checks took when nothing was committed since (this idle
    // cluster: snapshot/shelf.ts), else a new one; either way a restore point whose bytes are what the journal says.
    const rep = JSON.parse(String(r.stdout)) as {
      plan: Array<{ name: string }>;
      steps: Array<{ member?: string; kind: string; detail?: string }>;
      snapshots: Array<{ member: string; file: string; sha256: string; revision: string }>;
    };
    const snaps = rep.steps.filter((s) => s.kind === 'snapshot');
    expect(snaps.map((s) => s.member)).toEqual(rep.plan.map((m) => m.name));
    expect(snaps[0]!.detail).toMatch(/bytes from the leader \S+ via etcdctl, SHA-256 ok, revision \d+ ≥ \d+ .*restore point: revision \d+/);
    // (only the first: each later one is taken after a member's restart, which commits its attributes)
    for (const s of snaps.slice(1)) expect(s.detail).not.toMatch(/the one the checks took/);
    expect(rep.snapshots).toHaveLength(3);
    // (the restore point is kept once the hop is done: the first)
    const [rp] = rep.snapshots;
    expect(createHash('sha256').update(readFileSync(rp!.file)).digest('hex'), rp!.file).toBe(rp!.sha256);
    const st = JSON.parse(execFileSync(join(dirs!.v36, 'etcdutl'), ['snapshot', 'status', rp!.file, '-w', 'json'], { encoding: 'utf8' })) as {
      revision: number;
    };
    expect(String(st.revision)).toBe(rp!.revision);
    for (const m of c.members) {
      const status = JSON.parse(c.real.etcdctl(dirs!.v36, ['--endpoints', m.clientUrl, 'endpoint', 'status', '-w', 'json']))[0].Status as { version: string };
      expect(status.version).toBe('3.6.16');
      expect(environ(c, m)).toContain('ETCD_ENABLE_V2=true');
      expect(readFileSync(join(m.dir, 'etcd.log'), 'utf8')).toMatch(/unrecognized environment variable.*ETCD_ENABLE_V2=true/);
    }
  }, 600_000);

  it('--enable-v2=true as a flag: refused before any stop, by the rule and by 3.6.16 ("flag provided but not defined")', async () => {
    const { c, file } = await up(1, () => ({ args: ['--enable-v2=true'] }));
    const pid = c.pid(c.members[0]!);
    const r = await opsctl('kv', 'upgrade', '--to', '3.6', '--dry-run', '--cluster', file, '--target-bin', `3.6=${dirs!.v36}`);
    const err = `${String(r.stdout)}\n${String(r.stderr)}`;
    expect(r.exitCode, err).toBe(1);
    expect(err).toMatch(/etcd1: refuse: flag --enable-v2 in the command line of pid \d+ .*"flag provided but not defined" in 3\.6/);
    expect(err).toMatch(/\[trial-start\][^\n]*\n\s+etcd1: refuse: etcd 3\.6\.16 exited \(2\)[^\n]*flag provided but not defined: -enable-v2/);
    expect(c.pid(c.members[0]!)).toBe(pid);
    expect(c.alive(c.members[0]!)).toBe(true);
  }, 300_000);
});
