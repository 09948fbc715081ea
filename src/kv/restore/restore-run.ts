/**
 * `kv restore` carried out, journalled step by step (journal/restore-record.ts) so that opsctl killed
 * anywhere is finished by the identical command: the same run, from its first step not done.
 */
import { hostname } from 'node:os';
import { InterruptedError, OpsError } from '../../core/errors.js';
import type { MemberSpec } from '../cluster/cluster-file.js';
import { KvClient } from '../cluster/client.js';
import { countKeys } from '../cluster/keys.js';
import { observeCluster } from '../cluster/observe.js';
import { minor } from '../cluster/parse.js';
import { waitFor, WaitFatal } from '../cluster/wait.js';
import type { MemberDriver } from '../drivers/driver.js';
import { journalPath, writeRecord } from '../journal/journal.js';
import { newRestoreRecord, readRestore, restorePath, startsBegun, stopsBegun, type RestoreRecord, type RestoreStep } from '../journal/restore-record.js';
import { acquireLock } from '../upgrade/lock.js';
import { request, type RestoreOptions, type RestorePlan, type RestoreReport } from './restore.js';

const refused = (message: string, hint: string, code = 'restore_refused') =>
  new OpsError(`kv restore refused before any change: ${message}`, 1, { code, hint });

/**
 * Carries the plan out under the cluster's journal lock: builds the restored data beside the live
 * data (local), stops every member (the leader first), swaps each member's data (the old dir kept),
 * starts every member on the target, waits (with a deadline) until every member is healthy on it with
 * one leader, and verifies the revision and key count against the snapshot. Each step is written ahead
 * in the restore journal; a resumed plan passes the steps already done.
 */
export async function runRestore(o: RestoreOptions, p: RestorePlan): Promise<RestoreReport> {
  const t0 = o.now();
  const driver = o.driver!;
  const t = o.timeouts;
  o.debug?.('[kv] point-context: restore');
  const unlock = await acquireLock(journalPath(o.dataDir, o.cluster.key), o);
  try {
    const file = restorePath(o.dataDir, o.cluster.key);
    if (readRestore(file)?.updatedAt !== p.recordAt) {
      throw refused(
        `the restore journal ${file} changed since this command read it: another kv restore of this cluster ran meanwhile`,
        'run the command again: it reads what the other run left',
        'locked',
      );
    }
    const byName = new Map(p.members.map((m) => [m.name, m]));
    const req = (m: MemberSpec, run = p.run) =>
      request(o.snapshot, m, p.members.map((x) => `${x.name}=${x.peerUrl}`).join(','), p.token, run, byName.get(m.name)!.target);
    const rec: RestoreRecord =
      p.resume ??
      newRestoreRecord(
        {
          id: p.run,
          cluster: o.cluster.key,
          snapshot: { file: o.snapshot, sha256: p.snapshot.sha256, revision: p.snapshot.revision, liveKeys: p.expectedKeys },
          to: p.version,
          token: p.token,
          members: p.members.map(({ name, endpoint, peerUrl, target }) => ({ name, endpoint, peerUrl, target })),
        },
        p.order,
        o.now(),
      );
    // Whether a restored member came up before this run: clients may have written to the restored data since.
    const startedBefore = startsBegun(rec);
    rec.owner = { pid: process.pid, host: hostname() };
    rec.runs.push({ pid: process.pid, host: hostname(), startedAt: new Date(o.now()).toISOString() });
    const save = () => writeRecord(file, rec, o.now(), { trace: o.debug });
    let current: RestoreStep | undefined;
    /** Step `id`: written ahead as begun (the step before it done in the same write), then its body; a step already done is passed. */
    const step = async (id: string, body: () => Promise<string | undefined>): Promise<void> => {
      const s = rec.steps.find((x) => x.id === id)!;
      if (s.status === 'done') return;
      if (current) current.status = 'done';
      s.status = 'running';
      current = s;
      await save();
      const detail = await body();
      if (detail) s.detail = detail;
    };
    /** Before any member is stopped: the restore given up, its staged data dropped, its journal saying so (nothing changed). */
    const abandon = async () => {
      if (stopsBegun(rec)) return;
      for (const m of o.cluster.members) await driver.abandonRestore?.(m, req(m)).catch(() => undefined);
      rec.status = 'abandoned';
      await save().catch(() => undefined);
    };
    if (p.supersedes) for (const m of o.cluster.members) await driver.abandonRestore?.(m, req(m, p.supersedes.id));

    const p0 = o.now();
    await step('prepare', async () => {
      if (!driver.prepareRestore) return undefined;
      const s = o.reporter.begin("restore: building the restored data beside each member's data");
      try {
        for (const m of o.cluster.members) await driver.prepareRestore(m, req(m));
        s.done(`restore: restored data built for ${o.cluster.members.length} members`);
      } catch (err) {
        s.fail(`restore: ${(err as Error).message}`);
        await abandon();
        throw refused((err as Error).message, 'nothing was stopped: check the snapshot and the etcdctl of the target release');
      }
      return undefined;
    });
    const prepareMs = o.now() - p0;
    if (o.signal?.aborted && !stopsBegun(rec)) {
      await abandon();
      throw Object.assign(new InterruptedError('kv restore interrupted before any member was stopped: nothing changed'), {
        hint: 'run the same command again to restore',
      });
    }
    const s0 = o.now();
    const again = `run the same command again: it resumes this restore (run ${p.run}) where it stopped`;
    const failed = (what: string, err: unknown) =>
      new OpsError(`kv restore failed ${what}: ${(err as Error).message}`, 3, {
        code: 'restore_failed',
        hint: `the old data dirs are kept as DIR.before-restore-${p.run} (rename one back to DIR and start the member to return to the old data); fix the cause and ${again}`,
      });
    const stop = o.reporter.begin(`restore: stopping ${o.cluster.members.length} members`);
    const members = p.order.map((n) => o.cluster.members.find((m) => m.name === n)!);
    try {
      for (const m of members) await step(`stop/${m.name}`, async () => (await stopAndWait(o, driver, m), undefined));
    } catch (err) {
      stop.fail(`restore: ${(err as Error).message}`);
      throw new OpsError(`kv restore: stopping the members failed: ${(err as Error).message}`, 3, {
        code: 'restore_failed',
        hint: `no data was changed: fix the cause and ${again}; or start the stopped members again (your service manager) and move ${file} aside to give it up`,
      });
    }
    const stopMs = o.now() - s0;
    stop.done(`restore: every member stopped (${stopMs} ms)`);
    for (const m of o.cluster.members) {
      await step(`restore-data/${m.name}`, async () => {
        try {
          // (stopped again if it runs: a member started by hand since the stop never has its data swapped under it)
          await stopAndWait(o, driver, m);
          return await driver.restoreData!(m, req(m));
        } catch (err) {
          throw failed(`on ${m.name}`, err);
        }
      });
    }
    const start = o.reporter.begin(`restore: starting every member on ${p.version}`);
    try {
      for (const m of o.cluster.members) {
        await step(`start/${m.name}`, async () => {
          if (await driver.isRunning(m)) return 'running already';
          await driver.start(m, req(m).target);
          return undefined;
        });
      }
    } catch (err) {
      start.fail(`restore: ${(err as Error).message}`);
      throw failed('starting the members', err);
    }
    const h0 = o.now();
    let healthyMs = 0;
    let v0 = h0;
    let got: { revision: string; keys: number; clusterVersion: string; note?: string } | undefined;
    // (one step: a resume waits and checks again, both only look)
    await step('verify', async () => {
      const seen = await healthy(o, driver, p, (text) => start.update(text)).catch((err: Error) => {
        start.fail(`restore: ${err.message}`);
        throw failed('waiting for health', err);
      });
      healthyMs = o.now() - h0;
      const clusterVersion = seen.members[0]?.clusterVersion ?? '';
      start.done(`restore: ${seen.members.length} members healthy on ${p.version}, cluster version ${clusterVersion} (${healthyMs} ms)`);
      v0 = o.now();
      const [first] = seen.members;
      if (!first) throw new Error('restore: no member to verify'); // never: the wait above saw one leader among them
      const leader = seen.members.find((x) => x.id === first.leaderId) ?? first;
      const revision = seen.members
        .map((x) => BigInt(x.revision ?? '0'))
        .reduce((a, b) => (a > b ? a : b))
        .toString();
      const keys = await countKeys(new KvClient(leader.endpoint, { session: o.session, timeoutMs: t.requestMs }));
      const verify = o.reporter.begin('restore: verifying keys and revision against the snapshot');
      const problems: string[] = [];
      const snapRev = BigInt(p.snapshot.revision);
      let note: string | undefined;
      if (startedBefore && BigInt(revision) > snapRev) {
        // the restored members came up in a run killed before it verified: clients wrote since, the restore is not redone over that
        note = `the cluster is at revision ${revision}, ${BigInt(revision) - snapRev} after the snapshot's: written since the restored members came up (before this run); ${keys} keys`;
      } else {
        if (revision !== p.snapshot.revision) problems.push(`the cluster is at revision ${revision}, the snapshot at ${p.snapshot.revision}`);
        if (keys !== p.expectedKeys) problems.push(`the cluster holds ${keys} keys, the snapshot ${p.expectedKeys}`);
      }
      if (problems.length) {
        verify.fail(`restore: ${problems.join('; ')}`);
        throw new OpsError(`kv restore: the restored cluster does not match the snapshot: ${problems.join('; ')}`, 3, {
          code: 'restore_mismatch',
          hint: 'a client may have written meanwhile; check with opsctl kv status and kv get; the old data dirs are kept',
        });
      }
      verify.done(note ? `restore: ${note}` : `restore: revision ${revision} = the snapshot's, ${keys} keys = the snapshot's`);
      got = { revision, keys, clusterVersion, ...(note ? { note } : {}) };
      return note;
    });
    // (never undefined: a plan whose verify is done is a finished restore, not run)
    const { revision, keys, clusterVersion, note } = got!;
    if (current) current.status = 'done';
    rec.status = 'done';
    rec.result = got!;
    await save();
    const phasesMs = { prepare: prepareMs, stop: stopMs, healthy: healthyMs, verify: o.now() - v0 };
    return {
      status: 'restored',
      snapshot: o.snapshot,
      version: p.version,
      token: p.token,
      members: o.cluster.members.map((m) => ({ name: m.name, detail: rec.steps.find((s) => s.id === `restore-data/${m.name}`)?.detail ?? '' })),
      phasesMs,
      healthyMs,
      totalMs: o.now() - t0,
      revision,
      keys,
      expectedKeys: p.expectedKeys,
      clusterVersion,
      ...(p.resume ? { resumed: p.run } : {}),
      ...(note ? { note } : {}),
    };
  } finally {
    await unlock().catch(() => undefined);
  }
}

/** Until every member is healthy on the plan's version with one leader and one cluster version (a member whose process is gone three polls in a row fails it). */
async function healthy(o: RestoreOptions, driver: MemberDriver, p: RestorePlan, say: (text: string) => void) {
  const gone = new Map<string, number>();
  return waitFor(
    async () => {
      // A member whose process is gone on three polls in a row will not become healthy: say so now.
      for (const m of o.cluster.members) {
        const n = (await driver.isRunning(m)) ? 0 : (gone.get(m.name) ?? 0) + 1;
        gone.set(m.name, n);
        if (n >= 3) throw new WaitFatal(`${m.name}'s process exited after its start on the restored data (see its log)`);
      }
      const all = await observeCluster(o.cluster.members, { session: o.session, timeoutMs: o.timeouts.requestMs, alarms: false });
      const wrong = all.members.find((x) => x.serverVersion && minor(x.serverVersion) !== p.version);
      if (wrong) throw new WaitFatal(`${wrong.name} runs ${wrong.serverVersion}, not ${p.version}: check what the start command starts`);
      const sick = all.members.filter((x) => !x.healthy);
      if (sick.length) {
        say(`restore: waiting for ${sick.map((x) => x.name).join(', ')} to be healthy`);
        return undefined;
      }
      const leaders = new Set(all.members.map((x) => x.leaderId));
      if (leaders.size !== 1 || leaders.has(undefined) || leaders.has('0')) return undefined;
      // The leader decides the cluster version a few seconds after it is elected; until every member
      // reports the same one, the next kv upgrade would refuse ("not decided"): the restore is not done.
      // (every member on the restored version: the leader decides that one; 3.2 says 3.0.0 until it has)
      const versions = new Set(all.members.map((x) => x.clusterVersion));
      if (versions.size !== 1 || versions.has(undefined) || minor([...versions][0]) !== p.version) {
        say(`restore: waiting for the members to agree on the cluster version ${p.version} (${[...versions].map((v) => v ?? 'none').join(', ')})`);
        return undefined;
      }
      return all;
    },
    {
      timeoutMs: o.timeouts.healthyMs,
      pollMs: o.timeouts.pollMs,
      now: o.now,
      what: `every member healthy on ${p.version} with one leader and one cluster version`,
    },
  );
}

async function stopAndWait(o: RestoreOptions, driver: MemberDriver, m: MemberSpec): Promise<void> {
  const running = () => driver.isRunning(m);
  if (!(await running())) return;
  await driver.stop(m);
  const gone = async () => ((await running()) ? undefined : true);
  await waitFor(gone, { timeoutMs: o.timeouts.stopMs, pollMs: Math.min(o.timeouts.pollMs, 50), what: `${m.name} process exit` }).catch(async (err) => {
    if (!driver.kill) throw err;
    await driver.kill(m);
    await waitFor(gone, { timeoutMs: 10_000, pollMs: 100, what: `${m.name} process exit after SIGKILL` });
  });
}
