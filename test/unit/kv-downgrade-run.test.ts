import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OpsError } from '../../src/core/errors.js';
import { journalPath } from '../../src/kv/journal/journal.js';
import { runDowngrade, type DowngradeOptions } from '../../src/kv/restore/downgrade.js';
import { UpgradeRefused } from '../../src/kv/upgrade/options.js';
import { FakeCluster, fakeClock, recordingReporter } from '../helpers/fake-cluster.js';

/**
 * kv downgrade's refusals and its nothing-to-do (src/kv/restore/downgrade.ts) on fake members
 * (test/helpers/fake-cluster.ts): no process, no socket. Each refusal changes nothing: no driver call, no
 * downgrade request, no journal. (The member-by-member part is the upgrade's executor, tested with it.)
 */
const TIMEOUTS = { requestMs: 1000, stopMs: 1000, healthyMs: 2000, clusterVersionMs: 1000, snapshotMs: 1000, pollMs: 5 };

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(`${tmpdir()}/opsctl-downgrade-`);
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

const on = (version: string) => new FakeCluster({ members: ['kv1', 'kv2', 'kv3'].map((name) => ({ name, version })) });
const ALL = ['kv1', 'kv2', 'kv3'];

/** A child process in a unit test is a failure: every exec throws. */
const noExec = (() => {
  throw new Error('no child process in a unit test');
}) as unknown as DowngradeOptions['exec'];

function options(c: FakeCluster, extra: Partial<DowngradeOptions> = {}): DowngradeOptions {
  return {
    cluster: c.spec(),
    to: '3.5',
    dataDir,
    rollbackCommand: 'opsctl kv rollback',
    session: c.session(),
    driver: c.driver(),
    exec: noExec,
    signal: new AbortController().signal,
    now: fakeClock(),
    reporter: recordingReporter(),
    timeouts: TIMEOUTS,
    settle: 0,
    dryRun: false,
    snapshotVia: 'gateway',
    lockStaleMs: 60_000,
    ...extra,
  };
}

async function refusal(p: Promise<unknown>): Promise<OpsError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpsError);
  return err as OpsError;
}

/** Nothing changed: no driver call, every member up on its version, no record written under opsctl's data directory. */
function unchanged(c: FakeCluster, version: string) {
  expect(c.log).toEqual([]);
  expect(c.members.map((m) => `${m.name} ${m.version} ${m.running}`)).toEqual(ALL.map((n) => `${n} ${version} true`));
  expect(c.unexpected).toEqual([]);
  expect(readdirSync(dataDir)).toEqual([]);
}

describe('kv downgrade (restore/downgrade.ts) on fake members: refusals change nothing', () => {
  it('every member already on the target with its cluster version: nothing to do', async () => {
    const c = on('3.5');
    const r = await runDowngrade(options(c));
    expect(r).toMatchObject({ kind: 'downgrade', status: 'nothing-to-do', from: '3.5', to: '3.5', resumed: false });
    expect(r.planText).toBe('every member runs 3.5 and the cluster version is 3.5: nothing to downgrade');
    unchanged(c, '3.5');
  });

  it('a cluster on a minor with no downgrade API: refused, naming the restore point as the way back', async () => {
    const c = on('3.5');
    const err = await refusal(runDowngrade(options(c, { to: '3.4', skipTrial: { members: ALL, reason: 'unit test' } })));
    expect(err).toBeInstanceOf(UpgradeRefused);
    expect((err as UpgradeRefused).reasons).toEqual([
      "the members run kv1 3.5.9, kv2 3.5.9, kv3 3.5.9: kv downgrade takes a cluster whose every member runs 3.6 or 3.7 (etcd's downgrade API came with 3.6); to go back further, restore a hop's restore point: opsctl kv restore --from-hop MINOR",
    ]);
    unchanged(c, '3.5');
  });

  it('more than one minor down: refused (etcd downgrades one minor at a time)', async () => {
    const c = on('3.6');
    const err = await refusal(runDowngrade(options(c, { to: '3.4', skipTrial: { members: ALL, reason: 'unit test' } })));
    expect((err as UpgradeRefused).reasons).toEqual([
      "--to 3.4: etcd downgrades one minor at a time, from 3.6 to 3.5 only; to reach 3.4, downgrade to 3.5 first, or restore a hop's restore point (opsctl kv restore --from-hop 3.4)",
    ]);
    unchanged(c, '3.6');
  });

  it('a member down: refused naming it, nothing stopped', async () => {
    const c = new FakeCluster({
      members: [
        { name: 'kv1', version: '3.6' },
        { name: 'kv2', version: '3.6' },
        { name: 'kv3', version: '3.6', running: false },
      ],
    });
    const err = await refusal(runDowngrade(options(c, { skipTrial: { members: ALL, reason: 'unit test' } })));
    expect((err as UpgradeRefused).reasons).toEqual([expect.stringMatching(/^member kv3 \(http:\/\/kv3\.fake:2379\) is not reachable: /)]);
    expect(c.log).toEqual([]);
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it('a member whose start on the older binary is not proven (no trial possible here) refuses before anything is enabled, naming --skip-trial', async () => {
    const c = on('3.6');
    const err = await refusal(runDowngrade(options(c)));
    expect(err).toBeInstanceOf(UpgradeRefused);
    const reasons = (err as UpgradeRefused).reasons;
    expect(reasons.map((r) => r.replace(/: not proven: .*$/, ''))).toEqual(ALL.map((m) => `[trial-start] member ${m}`));
    expect(err.hint).toContain('--skip-trial kv1,kv2,kv3 --skip-reason "WHY"');
    unchanged(c, '3.6');
  });

  it('an unfinished upgrade recorded for the cluster: refused (finish or undo it first), nothing changed', async () => {
    const c = on('3.6');
    const file = journalPath(dataDir, c.spec().key);
    mkdirSync(dirname(file), { recursive: true });
    const at = new Date(Date.UTC(2026, 0, 1)).toISOString();
    const j = {
      version: 1,
      id: '20260101T000000-abcdef',
      cluster: c.spec().key,
      source: '3.5',
      target: '3.6',
      allowSameVersion: false,
      status: 'halted',
      createdAt: at,
      updatedAt: at,
      owner: { pid: 1, host: 'elsewhere' },
      members: c.members.map((m) => ({
        name: m.name,
        id: m.id,
        endpoint: `http://${m.name}.fake:2379`,
        fromVersion: '3.5.9',
        action: 'upgrade',
        reason: '',
        wasLeader: false,
      })),
      previous: {},
      steps: [{ id: 'kv1/stop', member: 'kv1', kind: 'stop', status: 'done' }],
      snapshots: [],
    };
    writeFileSync(file, JSON.stringify(j));
    const err = await refusal(runDowngrade(options(c)));
    expect(err.code).toBe('journal_conflict');
    expect(err.message).toBe(`an unfinished upgrade to 3.6 of this cluster is recorded in ${file}`);
    expect(err.hint).toContain('opsctl kv upgrade --to 3.6');
    expect(c.log).toEqual([]);
    expect(readdirSync(join(dataDir, 'kv', 'journals'))).toEqual([`${c.spec().key}.json`]);
  });
});

describe('kv downgrade (restore/downgrade.ts) on fake members: etcd says no', () => {
  it('etcd refuses to validate the downgrade: refused with nothing enabled and no member stopped', async () => {
    const c = on('3.6');
    c.routes['/maintenance/downgrade'] = () => ({ status: 400, body: { code: 9, message: 'etcdserver: invalid downgrade target version', details: [] } });
    const err = await refusal(runDowngrade(options(c, { skipTrial: { members: ALL, reason: 'unit test' } })));
    expect(err).toBeInstanceOf(UpgradeRefused);
    expect((err as UpgradeRefused).reasons).toEqual([
      'etcd refused to validate the downgrade to 3.5: http://kv1.fake:2379: etcdserver: invalid downgrade target version (HTTP 400)',
    ]);
    expect(c.asked).toEqual(['kv1 /maintenance/downgrade {"action":"VALIDATE","version":"3.5"}']);
    unchanged(c, '3.6');
  });
});
