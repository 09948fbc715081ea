import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { startCluster, type RealTestCluster, type SimulatedTestCluster } from '../framework/index.js';
import { until } from '../helpers/kv.js';

/**
 * What a person meets in the first hour of kv upgrade (issue 49), through the built binary on the
 * simulated sandbox (and real etcd where a text depends on what etcd answers): the plan's three-line
 * summary and each finding printed once, `~` in path flags, the refusals titled by their verb, the way
 * back said as it is after 3.5 → 3.6, and a peer URL given as --endpoints named as one.
 */
type Row = { rule: string; member?: string; status: string; detail: string; hop: string };

function sandbox(prefix: string, version: string) {
  const cfg = tempConfigDir(prefix);
  const home = mkdtempSync(join(tmpdir(), `${prefix}home-`));
  const env = { OPSCTL_CONFIG_DIR: cfg.dir, NO_COLOR: '1', CI: '1', HOME: home };
  const opsctl = (...args: string[]) => runBin(args, { env, timeout: 240_000 });
  let c: SimulatedTestCluster | undefined;
  return {
    cfg,
    home,
    opsctl,
    up: async () => void (c = await startCluster({ members: 'simulated', size: 3, version, configDir: cfg.dir })),
    down: async () => {
      await c?.destroy();
      cfg.cleanup();
      rmSync(home, { recursive: true, force: true });
    },
    members: async () =>
      JSON.parse(String((await opsctl('kv', 'member', 'list', '--json')).stdout)) as Array<{ name: string; peer_urls: string[]; client_urls: string[] }>,
  };
}

describe('kv upgrade plans and words on a 3.2 sandbox (built binary)', () => {
  const s = sandbox('opsctl-kv-words-', '3.2');
  beforeAll(() => s.up(), 120_000);
  afterAll(() => s.down(), 120_000);

  it('the 3.2 → 3.6 dry run opens with the three-line summary and prints each finding once; --json keeps every row', async () => {
    const r = await s.opsctl('kv', 'upgrade', '--to', '3.6', '--dry-run');
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const out = String(r.stdout);
    const lines = out.trimEnd().split('\n');
    expect(lines.slice(0, 3)).toEqual([
      expect.stringMatching(
        /^Upgrade 3\.2 → 3\.6 in 4 hops \(3\.3, 3\.4, 3\.5, 3\.6\), each restarting the 3 members one at a time: kv\d, kv\d, then kv\d \(the leader\)$/,
      ),
      expect.stringMatching(/^Nothing blocks it: \d+ of \d+ findings ok; to heed: 3 warn \(3\.3 → 3\.4 \[enable-v2\] kv1, kv2, kv3\)/),
      'Next: run the same command without --dry-run: it asks before the first stop (--yes: no question)',
    ]);
    // each hop's rules once each, a passed rule on one line; nothing of the plan on stderr
    const hops = out.split(/^Hop \d\/4: /m).slice(1);
    expect(hops).toHaveLength(4);
    for (const h of hops) {
      const ids = [...h.matchAll(/^\s+\[([a-z0-9.-]+)\]/gm)].map((m) => m[1]);
      expect(ids.length).toBeGreaterThan(3);
      expect(new Set(ids).size, h).toBe(ids.length);
    }
    expect(out).toMatch(/\[trial-start\] ok on kv1, kv2, kv3: /);
    expect(out).toMatch(/\[enable-v2\] [^\n]*\n\s+kv1, kv2, kv3: warn: enable-v2 not set/);
    expect(String(r.stderr)).not.toMatch(/\[[a-z0-9.-]+\]/);
    // the figure the issue measured (146 lines then; 182 on this sandbox before the change): under 100 now
    expect(lines.length).toBeLessThan(100);
    // --json: every member's own finding (the 12 settings trials with their words)
    const j = await s.opsctl('kv', 'upgrade', '--to', '3.6', '--dry-run', '--json');
    const rows = (JSON.parse(String(j.stdout)) as { checks: Row[] }).checks;
    expect(rows.filter((x) => x.rule === 'trial-start' && /^etcd 3\.\d\.\d+ served \/health .* with its settings/.test(x.detail))).toHaveLength(12);
    expect(rows.filter((x) => x.rule === 'enable-v2' && x.status === 'warn')).toHaveLength(3);
  }, 300_000);

  it('a one-hop dry run: the rulebook once (in the plan, not again before the pre-flight)', async () => {
    const r = await s.opsctl('kv', 'upgrade', '--to', '3.3', '--dry-run');
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const all = `${String(r.stdout)}${String(r.stderr)}`;
    expect(String(r.stdout)).toMatch(/^Upgrade 3\.2 → 3\.3, restarting the 3 members one at a time: .*\nNothing blocks it: 15 of 15 findings ok\nNext: /);
    for (const id of ['trial-start', 'auth-3.2.31', 'config-3.3', 'v2-without-v3-db', 'data-trial']) expect(all.split(`[${id}]`)).toHaveLength(2);
    expect(String(r.stderr)).not.toMatch(/Checks of the hop/);
  }, 300_000);

  it('~ and ~/ in path flags are the home directory (the shell leaves them after =); ~user is refused naming the fix', async () => {
    const eps = (await s.members()).map((m) => m.client_urls[0]).join(',');
    writeFileSync(
      join(s.home, 'prod.yaml'),
      `members:\n${eps
        .split(',')
        .map((e, i) => `  - {name: kv${i + 1}, endpoint: "${e}"}`)
        .join('\n')}\n`,
    );
    const health = await s.opsctl('kv', 'health', '--cluster=~/prod.yaml');
    expect(health.exitCode, String(health.stderr)).toBe(0);
    // --target-bin 3.3=~/etcd/v3.3: the expanded directory is the one looked in
    const bin = await s.opsctl('kv', 'upgrade', '--to', '3.3', '--dry-run', '--no-backup', '--endpoints', eps, '--target-bin', '3.3=~/etcd/v3.3');
    expect(bin.exitCode).toBe(1);
    expect(String(bin.stderr)).toContain(`--target-bin 3.3=${s.home}/etcd/v3.3: ${s.home}/etcd/v3.3/etcd does not exist`);
    const other = await s.opsctl('kv', 'upgrade', '--to', '3.3', '--dry-run', '--endpoints', eps, '--target-bin', '3.3=~bob/etcd');
    expect(other.exitCode).toBe(2);
    expect(String(other.stderr)).toMatch(
      /--target-bin 3\.3=~bob\/etcd: opsctl expands ~ and ~\/ \(your home\) only, not ~bob\n\s+write the path in full \(e\.g\. \/home\/bob\/etcd\)/,
    );
    // a cluster file's local paths too; a path on the member's host is refused, naming the fix
    writeFileSync(join(s.home, 'tls.yaml'), `members:\n  - {name: kv1, endpoint: "${eps.split(',')[0]}"}\ntls: {cacert: ~/ca.pem}\n`);
    const tls = await s.opsctl('kv', 'health', '--cluster', join(s.home, 'tls.yaml'));
    expect(tls.exitCode).toBe(2);
    expect(String(tls.stderr)).toContain(`tls.cacert in ${join(s.home, 'tls.yaml')}: ${s.home}/ca.pem does not exist`);
    writeFileSync(
      join(s.home, 'hosts.yaml'),
      `members:\n  - {name: kv1, endpoint: "${eps.split(',')[0]}", host: h1}\ndriver: {type: systemd, bins: {"3.3": "~/etcd-3.3/etcd"}, binLink: /usr/local/bin/etcd}\n`,
    );
    const remote = await s.opsctl('kv', 'health', '--cluster', join(s.home, 'hosts.yaml'));
    expect(remote.exitCode).toBe(2);
    expect(String(remote.stderr)).toMatch(
      /driver\.bins\.3\.3: "~\/etcd-3\.3\/etcd" is a path on the member's host, where nothing expands its ~\n\s+write it in full/,
    );
  }, 300_000);

  it('a peer URL given as --endpoints is named as one, with the client URL to give (the sandbox answers /members as etcd does)', async () => {
    const [m] = await s.members();
    const peer = m!.peer_urls[0]!;
    const get = await s.opsctl('kv', 'get', 'k', '--endpoints', peer);
    expect(get.exitCode).toBe(2);
    expect(String(get.stderr)).toContain(
      `${peer} is the peer URL of member ${m!.name} (etcd's member-to-member port), not a client URL: its client URL is ${m!.client_urls[0]}`,
    );
    expect(String(get.stderr)).toMatch(
      new RegExp(`give its client URL instead: --endpoints ${m!.client_urls[0]!.replace(/\./g, '\\.')} \\(every member's: --endpoints `),
    );
    const up = await s.opsctl('kv', 'upgrade', '--to', '3.3', '--dry-run', '--endpoints', peer.replace('http://', ''));
    expect(up.exitCode).toBe(1);
    expect(String(up.stderr)).toContain(`is the peer URL of member ${m!.name}`);
  }, 120_000);
});

describe('after 3.5 → 3.6: the way back said as it is; refusals titled by their verb (built binary, sandbox)', () => {
  const s = sandbox('opsctl-kv-back-words-', '3.5');
  beforeAll(() => s.up(), 120_000);
  afterAll(() => s.down(), 120_000);

  it('downgrade refused (not "upgrade refused"); the 3.6 step, report and rollback name kv downgrade --to 3.5 and the restore point', async () => {
    const down = await s.opsctl('kv', 'downgrade', '--to', '3.4', '--dry-run');
    expect(down.exitCode).toBe(1);
    expect(String(down.stderr)).toMatch(/^X downgrade refused before any change:\n\s+- the members run kv\d 3\.5\.\d+/m);
    expect(String(down.stderr)).not.toMatch(/upgrade refused/);

    const report = join(s.cfg.dir, 'up.html');
    const up = await s.opsctl('kv', 'upgrade', '--to', '3.6', '--yes', '--settle', '0s', '--poll-interval', '50ms', '--report', report);
    expect(up.exitCode, String(up.stderr)).toBe(0);
    const said =
      'updated from 3.5: members no longer go back by a restart on 3.5 (kv rollback); the way back: opsctl kv downgrade --to 3.5 ' +
      "(etcd's downgrade API, member by member, no write lost), or the hop's restore point (opsctl kv restore --from-hop 3.5; writes after it are lost)";
    for (const text of [String(up.stdout), readFileSync(report, 'utf8').replace(/&#39;/g, "'")]) {
      expect(text).toContain(said);
      expect(text).not.toMatch(/downgrade is no longer possible/);
    }
    const json = await s.opsctl('kv', 'status', '--report', join(s.cfg.dir, 'again.html'), '--json');
    expect(String(json.stdout)).toContain('the way back: opsctl kv downgrade --to 3.5');

    const rb = await s.opsctl('kv', 'rollback');
    expect(rb.exitCode).toBe(1);
    expect(String(rb.stderr)).toMatch(
      /^X kv rollback refused before any change: the cluster version is already 3\.6\.0: members no longer go back to 3\.5 by a restart/m,
    );
    expect(String(rb.stderr)).toMatch(
      /the way back: opsctl kv downgrade --to 3\.5 \(etcd's downgrade API, member by member, no write lost\), or a restore from the snapshot/,
    );
    // and it is there: the downgrade the words name takes the cluster back
    const back = await s.opsctl('kv', 'downgrade', '--to', '3.5', '--yes', '--settle', '0s', '--poll-interval', '50ms');
    expect(back.exitCode, String(back.stderr)).toBe(0);
  }, 400_000);
});

const real = [
  ['3.4', process.env.OPSCTL_ETCD_34_DIR],
  ['3.6', process.env.OPSCTL_ETCD_36_DIR],
] as const;

describe.each(real.filter(([, dir]) => dir).map(([v, dir]) => ({ v, dir: dir! })))('a peer URL of real etcd $v as --endpoints', ({ v, dir }) => {
  let c: RealTestCluster;
  const cfg = tempConfigDir('opsctl-kv-peer-');
  beforeAll(async () => {
    c = await startCluster({ members: 'real', configDir: cfg.dir, size: 1, bins: { [v]: dir } });
    c.real.start(c.members[0]!, v);
    await until(
      () =>
        fetch(`${c.endpoints[0]}/health`).then(
          (r) => r.ok,
          () => false,
        ),
      60_000,
      `etcd ${v} healthy`,
    );
  }, 120_000);
  afterAll(async () => {
    await c?.destroy();
    cfg.cleanup();
  });

  it('is named as the peer URL of its member, with its client URL (etcd answers /members there)', async () => {
    const m = c.members[0]!;
    mkdirSync(cfg.dir, { recursive: true });
    const r = await runBin(['kv', 'get', 'k', '--endpoints', m.peerUrl], { env: { OPSCTL_CONFIG_DIR: cfg.dir, CI: '1' }, timeout: 60_000 });
    expect(r.exitCode).toBe(2);
    expect(String(r.stderr)).toContain(
      `${m.peerUrl} is the peer URL of member ${m.name} (etcd's member-to-member port), not a client URL: its client URL is ${m.clientUrl}`,
    );
    expect(String(r.stderr)).toContain(`give its client URL instead: --endpoints ${m.clientUrl}`);
  }, 120_000);
});
