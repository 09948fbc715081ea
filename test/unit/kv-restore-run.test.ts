import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OpsError } from '../../src/core/errors.js';
import type { MemberSpec } from '../../src/kv/cluster/cluster-file.js';
import type { RestoreRequest } from '../../src/kv/drivers/driver.js';
import { readRestore, restorePath, type RestoreRecord } from '../../src/kv/journal/restore-record.js';
import type { RestoreOptions, RestorePlan } from '../../src/kv/restore/restore.js';
import { runRestore } from '../../src/kv/restore/restore-run.js';
import { FakeCluster, fakeClock, recordingReporter } from '../helpers/fake-cluster.js';

/**
 * kv restore carried out (src/kv/restore/restore-run.ts) on fake members (test/helpers/fake-cluster.ts): no
 * process, no socket. Three members on 3.5 restored from a snapshot at revision 30 with 5 keys, onto 3.4;
 * kv2 leads (stopped first).
 */
const TIMEOUTS = { requestMs: 1000, stopMs: 1000, healthyMs: 2000, clusterVersionMs: 1000, snapshotMs: 1000, pollMs: 5 };
const SNAPSHOT = '/backups/kv.db';

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(`${tmpdir()}/opsctl-restore-`);
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

const cluster = () => new FakeCluster({ members: ['kv1', 'kv2', 'kv3'].map((name) => ({ name, version: '3.5' })), revision: 90, keys: 12 });

/** The fake cluster's driver with kv restore's calls: each logged; the restored data holds the snapshot's revision and keys. */
function restoringDriver(c: FakeCluster, fail: { prepare?: string } = {}) {
  const logged = (what: string, m: MemberSpec) => {
    c.log.push(`${what} ${m.name}`);
    c.onCall?.(`${what} ${m.name}`);
  };
  return c.driver({
    prepareRestore: (m: MemberSpec) => {
      logged('prepare', m);
      return m.name === fail.prepare ? Promise.reject(new Error(`etcdctl snapshot restore for ${m.name} exited with code 1`)) : Promise.resolve();
    },
    restoreData: (m: MemberSpec, r: RestoreRequest) => {
      logged('restore-data', m);
      c.revision = 30;
      c.keys = 5;
      return Promise.resolve(`${m.name}: old data kept as data.before-restore-${r.run}, token ${r.token}`);
    },
    abandonRestore: (m: MemberSpec) => {
      logged('abandon', m);
      return Promise.resolve();
    },
  });
}

function plan(c: FakeCluster, extra: Partial<RestorePlan> = {}): RestorePlan {
  return {
    snapshot: {
      file: SNAPSHOT,
      hash: 'abcd1234',
      revision: '30',
      totalKey: 9,
      totalSize: 20480,
      sha256: 'f'.repeat(64),
      kind: 'etcd',
      liveKeys: 5,
    } as RestorePlan['snapshot'],
    restorePoint: true,
    version: '3.4',
    token: 'restored-20260101',
    run: '20260101T000000',
    members: c.spec().members.map((m) => ({ name: m.name, endpoint: m.endpoint, peerUrl: m.peerUrl!, target: { version: '3.4' }, check: 'ok' })),
    leader: 'kv2',
    expectedKeys: 5,
    notes: [],
    order: ['kv2', 'kv1', 'kv3'],
    ...extra,
  };
}

function options(c: FakeCluster, extra: Partial<RestoreOptions> = {}): RestoreOptions {
  return {
    cluster: c.spec(),
    session: c.session(),
    driver: restoringDriver(c),
    dataDir,
    snapshot: SNAPSHOT,
    timeouts: TIMEOUTS,
    now: fakeClock(),
    reporter: recordingReporter(),
    lockStaleMs: 60_000,
    ...extra,
  };
}

/** A resumed plan, as restore.ts plans one from the record left on disk. */
function resumed(c: FakeCluster): RestorePlan {
  const rec = readRestore(restorePath(dataDir, c.spec().key))!;
  return plan(c, { resume: rec, recordAt: rec.updatedAt });
}

async function refusal(p: Promise<unknown>): Promise<OpsError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpsError);
  return err as OpsError;
}

const record = (c: FakeCluster): RestoreRecord => readRestore(restorePath(dataDir, c.spec().key))!;

describe('kv restore carried out (restore/restore-run.ts) on fake members', () => {
  it('builds every member its data, stops them all (the leader first), swaps each one’s data, starts each on 3.4, verifies the snapshot’s revision and keys', async () => {
    const c = cluster();
    const r = await runRestore(options(c), plan(c));
    expect(c.log).toEqual([
      'prepare kv1',
      'prepare kv2',
      'prepare kv3',
      'stop kv2',
      'stop kv1',
      'stop kv3',
      'restore-data kv1',
      'restore-data kv2',
      'restore-data kv3',
      'start kv1 3.4',
      'start kv2 3.4',
      'start kv3 3.4',
    ]);
    expect(r).toMatchObject({ status: 'restored', version: '3.4', revision: '30', keys: 5, expectedKeys: 5, clusterVersion: '3.4.0' });
    expect(r.members.map((m) => m.detail)).toEqual(
      ['kv1', 'kv2', 'kv3'].map((m) => `${m}: old data kept as data.before-restore-20260101T000000, token restored-20260101`),
    );
    const rec = record(c);
    expect(rec.status).toBe('done');
    expect(rec.steps.every((s) => s.status === 'done')).toBe(true);
    expect(rec.result).toEqual({ revision: '30', keys: 5, clusterVersion: '3.4.0' });
    expect(c.unexpected).toEqual([]);
  });

  it('a restored data build that fails refuses before any stop: every member’s staged data dropped, the record abandoned, nothing stopped', async () => {
    const c = cluster();
    const err = await refusal(runRestore(options(c, { driver: restoringDriver(c, { prepare: 'kv2' }) }), plan(c)));
    expect(err.code).toBe('restore_refused');
    expect(err.exitCode).toBe(1);
    expect(err.message).toBe('kv restore refused before any change: etcdctl snapshot restore for kv2 exited with code 1');
    expect(c.log).toEqual(['prepare kv1', 'prepare kv2', 'abandon kv1', 'abandon kv2', 'abandon kv3']);
    expect(c.members.every((m) => m.running && m.version === '3.5')).toBe(true);
    expect(record(c).status).toBe('abandoned');
  });

  it('refuses before any change when the restore journal changed since it was planned (another restore ran meanwhile)', async () => {
    const c = cluster();
    const err = await refusal(runRestore(options(c), plan(c, { recordAt: '2026-01-01T00:00:00.000Z' })));
    expect(err.code).toBe('locked');
    expect(err.message).toMatch(/^kv restore refused before any change: the restore journal .* changed since this command read it/);
    expect(c.log).toEqual([]);
  });

  it('Ctrl-C before the first stop: the staged data dropped, nothing changed', async () => {
    const c = cluster();
    const abort = new AbortController();
    c.onCall = (call) => void (call === 'prepare kv3' && abort.abort());
    const err = await runRestore(options(c, { signal: abort.signal }), plan(c)).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).toBe('kv restore interrupted before any member was stopped: nothing changed');
    expect(c.log).toEqual(['prepare kv1', 'prepare kv2', 'prepare kv3', 'abandon kv1', 'abandon kv2', 'abandon kv3']);
    expect(record(c).status).toBe('abandoned');
  });

  it('a member whose process exits after its start fails the wait (exit 3, the old dirs named); once it runs, the same command only verifies', async () => {
    const c = cluster();
    c.exitsOnStart.add('kv3');
    const err = await refusal(runRestore(options(c), plan(c)));
    expect(err.code).toBe('restore_failed');
    expect(err.exitCode).toBe(3);
    expect(err.message).toBe("kv restore failed waiting for health: kv3's process exited after its start on the restored data (see its log)");
    expect(err.hint).toContain('DIR.before-restore-20260101T000000');
    expect(record(c).steps.find((s) => s.id === 'verify')?.status).toBe('running');
    // kv3 started by hand; the identical command resumes at the verify: nothing stopped, swapped or started again
    c.exitsOnStart.clear();
    c.member('kv3').running = true;
    c.log.length = 0;
    const r = await runRestore(options(c), resumed(c));
    expect(c.log).toEqual([]);
    expect(r).toMatchObject({ status: 'restored', resumed: '20260101T000000', revision: '30', keys: 5 });
    expect(record(c).status).toBe('done');
  });

  it('a start command that fails stops the starts there (exit 3): the members after it are not started; the same command starts from it', async () => {
    const c = cluster();
    c.startFails.add('kv2');
    const err = await refusal(runRestore(options(c), plan(c)));
    expect(err.code).toBe('restore_failed');
    expect(err.exitCode).toBe(3);
    expect(err.message).toBe('kv restore failed starting the members: the start command of kv2 exited with code 1');
    expect(c.log.slice(-2)).toEqual(['start kv1 3.4', 'start kv2 3.4']);
    c.startFails.clear();
    c.log.length = 0;
    const r = await runRestore(options(c), resumed(c));
    expect(c.log).toEqual(['start kv2 3.4', 'start kv3 3.4']);
    expect(r).toMatchObject({ status: 'restored', revision: '30', keys: 5 });
  });

  it('killed in the middle of the data swaps: the same command passes the steps done and goes on from the one begun', async () => {
    const c = cluster();
    const file = restorePath(dataDir, c.spec().key);
    let left: string | undefined;
    c.onCall = (call) => {
      if (call === 'restore-data kv2' && left === undefined) {
        left = readFileSync(file, 'utf8');
        throw new Error('killed');
      }
    };
    await refusal(runRestore(options(c), plan(c)));
    writeFileSync(file, left!);
    c.onCall = undefined;
    c.log.length = 0;
    const r = await runRestore(options(c), resumed(c));
    expect(c.log).toEqual(['restore-data kv2', 'restore-data kv3', 'start kv1 3.4', 'start kv2 3.4', 'start kv3 3.4']);
    expect(r).toMatchObject({ status: 'restored', revision: '30', keys: 5 });
  });

  it('a cluster that does not hold the snapshot’s keys after the restore: exit 3 naming both counts', async () => {
    const c = cluster();
    const driver = restoringDriver(c);
    const restoreData = driver.restoreData!.bind(driver);
    driver.restoreData = async (m, r) => {
      const said = await restoreData(m, r);
      c.keys = 4;
      return said;
    };
    const err = await refusal(runRestore(options(c, { driver }), plan(c)));
    expect(err.code).toBe('restore_mismatch');
    expect(err.exitCode).toBe(3);
    expect(err.message).toBe('kv restore: the restored cluster does not match the snapshot: the cluster holds 4 keys, the snapshot 5');
  });
});
