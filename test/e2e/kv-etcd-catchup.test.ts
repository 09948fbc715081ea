import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type RealTestCluster } from '../framework/index.js';
import { requireProgram } from '../helpers/e2e.js';
import { etcdReleaseDirs } from '../helpers/etcd-releases.js';

const run = promisify(execFile);
const releases = etcdReleaseDirs();
const ready = Boolean(releases) && requireProgram('curl', '/usr/bin/curl');

/**
 * Catch-up measured, not assumed: the production path (command driver, client-certificate TLS, no
 * v2-size template, --settle auto, the default) on a real 3-member etcd 3.2.32 cluster holding v2
 * and v3 data. opsctl measures each member's v2 data over the cluster's TLS connection, finds it
 * under 50 MB and so applies no catch-up wait, and says so; "caught up" compares the raft index
 * with the leader's as well as the revision.
 */
describe.runIf(ready)('kv upgrade --settle auto: the v2 data size measured on the member (real etcd, TLS, command driver)', () => {
  let c: RealTestCluster;
  const tlsArgs = () => ['--cacert', c.certs!.ca, '--cert', c.certs!.clientCert, '--key', c.certs!.clientKey];
  const curl = (...args: string[]) => run('curl', ['-sS', '--max-time', '5', ...tlsArgs(), ...args]).then((r) => r.stdout);
  const versions = () =>
    Promise.all(
      c.endpoints.map((e) =>
        curl(`${e}/version`).then(
          (t) => JSON.parse(t),
          () => undefined,
        ),
      ),
    );
  const V2_VALUE = 'v'.repeat(1000);

  beforeAll(async () => {
    c = await startCluster({
      members: 'real',
      size: 3,
      version: '3.2',
      tls: { clientCn: 'root' },
      bins: { '3.2': releases!.v32, '3.3': releases!.v33 },
      ready: 'version',
    });
    // v2 data (24 values of 1000 bytes) through the v2 API, and some v3 keys.
    for (let i = 0; i < 24; i++) await curl('-XPUT', `${c.endpoints[i % 3]}/v2/keys/legacy/k${i}`, '-d', `value=${V2_VALUE}`);
    for (let i = 0; i < 10; i++) c.real.etcdctl(releases!.v33, ['put', `v3/${i}`, `value-${i}`]);
  }, 300_000);

  afterAll(() => c?.destroy());

  it("measures each member's v2 data over TLS, applies no 2-minute wait under 50 MB and says which applied; caught up by raft index and revision", async () => {
    // Deadline of the run far below 3 × 2 minutes: the blind wait would end it as timed out.
    const r = await c.opsctlWith(
      { timeout: 200_000 },
      'kv',
      'upgrade',
      '--to',
      '3.3',
      '--yes',
      '--no-backup',
      '--cluster',
      c.file,
      '--poll-interval',
      '100ms',
      '--json',
    );
    expect(r.timedOut).toBe(false);
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const report = JSON.parse(String(r.stdout));
    expect(report.status).toBe('done');
    const settles = report.steps.filter((s: any) => s.kind === 'settle');
    expect(settles).toHaveLength(3);
    // only between members: none after the last one
    expect(settles[2].detail).toBe('0 ms (the last member of this hop: the settle is between members)');
    for (const s of settles.slice(0, 2)) {
      // (on the member's host where opsctl reaches it: its WAL's v2 writes, the size etcd replays; else its v2 key tree)
      const m = /^0 ms \(v2 data (\d+) bytes \(measured on (\S+?)(?:'s host|: its v2 key tree)\): under 50 MB, no catch-up wait\)$/.exec(s.detail);
      expect(m, s.detail).not.toBeNull();
      // The 24 values of 1000 bytes are in it (as JSON, with their keys and indexes).
      expect(Number(m![1])).toBeGreaterThan(24 * 1000);
      expect(Number(m![1])).toBeLessThan(24 * 1000 * 2);
      expect(m![2]).toBe(s.member);
    }
    for (const s of report.steps.filter((x: any) => x.kind === 'wait-healthy')) {
      expect(s.detail).toMatch(/^3\.3\.27, cluster healthy, revision \d+ ≥ leader \S+'s \d+, raft index \d+ ≥ \d+$/);
    }
    const v = await versions();
    expect(v.map((x) => x?.etcdserver)).toEqual(['3.3.27', '3.3.27', '3.3.27']);
    // The v2 data came through.
    expect(JSON.parse(await curl(`${c.endpoints[0]}/v2/keys/legacy/k23`)).node.value).toBe(V2_VALUE);
  }, 240_000);
});
