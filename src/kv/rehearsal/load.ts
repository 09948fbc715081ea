/**
 * Inside the clone: its members started as the driver starts them, and the load shape a cluster carries
 * while it is upgraded (a writer, and a /health probe as monitoring sends one: on 3.2 to 3.5 each /health
 * is a v2 QGET that raft writes into every member's WAL, which 3.6 refuses to replay). At the end every
 * acknowledged write is read back: the rehearsal passes only with none lost.
 */
import type { MemberSpec } from '../cluster/cluster-file.js';
import { KvClient } from '../cluster/client.js';
import type { KvSession } from '../cluster/session.js';
import { sleep, waitFor } from '../cluster/wait.js';
import type { MemberDriver } from '../drivers/driver.js';

/** Starts every member of the clone on what it runs now (the driver's own start) and waits for one leader; the time it took. */
export async function startClone(
  driver: MemberDriver,
  members: readonly MemberSpec[],
  session: KvSession,
  timeoutMs: number,
  now: () => number,
): Promise<number> {
  const started = now();
  await Promise.all(
    members.map(async (m) => {
      const target = driver.current(m);
      if (!target) throw new Error(`the clone's member ${m.name}: the driver does not know what it runs`);
      if (!(await driver.isRunning(m))) await driver.start(m, target);
    }),
  );
  await waitFor(
    async () => {
      const leaders = await Promise.all(
        members.map(async (m) => {
          const c = new KvClient(m.endpoint, { timeoutMs: 1000, session });
          const h = await c.health();
          return h.healthy ? (await c.status()).leaderId : undefined;
        }),
      );
      return leaders.every(Boolean) && new Set(leaders).size === 1 ? true : undefined;
    },
    { timeoutMs, pollMs: 100, firstPollMs: 20, what: "the clone's members healthy with one leader", now },
  );
  return now() - started;
}

export interface LoadResult {
  /** `unread`: no member answered the read-back within its deadline (nothing could be said of the acknowledged writes). */
  writes: { acked: number; lost: number; failed: number; unread?: true };
  probes: number;
  probeFailures: number;
}

/** A writer every `writeEveryMs` and a /health probe every `probeEveryMs`, round-robin over the members, until stop(). */
export function startLoad(
  members: readonly MemberSpec[],
  session: KvSession,
  o: { writeEveryMs: number; probeEveryMs: number; readBackMs?: number },
): { stop(): Promise<LoadResult> } {
  const stopping = new AbortController();
  const clients = members.map((m) => new KvClient(m.endpoint, { timeoutMs: 2000, session }));
  const acked: string[] = [];
  let failed = 0;
  let probes = 0;
  let probeFailures = 0;
  const loop = async (every: number, step: (i: number) => Promise<void>) => {
    for (let i = 0; !stopping.signal.aborted; i++) {
      await step(i);
      await sleep(every, stopping.signal).catch(() => undefined);
    }
  };
  const writer = loop(o.writeEveryMs, async (i) => {
    const key = `opsctl-rehearsal/${String(i).padStart(6, '0')}`;
    try {
      await clients[i % clients.length]!.put(key, String(i));
      acked.push(key);
    } catch {
      failed++; // (a member restarting: the write was not acknowledged, so it may be lost)
    }
  });
  const probe = loop(o.probeEveryMs, async (i) => {
    probes++;
    if (!(await clients[i % clients.length]!.httpHealth().catch(() => ({ healthy: false }))).healthy) probeFailures++;
  });
  return {
    async stop() {
      stopping.abort();
      await Promise.all([writer, probe]);
      // every acknowledged write read back from a member that answers: one range read of the writer's prefix
      // (a key per request took 5 ms a key: 1.5 s after a 30 s rehearsal). A member that does not answer within its
      // request's time is asked again, each in turn, until one does or `readBackMs` (a minute) has passed (a clone whose
      // members were just restarted, on a loaded machine): a read that never came is said as such, never counted as lost.
      const readers = members.map((m) => new KvClient(m.endpoint, { timeoutMs: 10_000, session }));
      let turn = 0;
      const held = await waitFor(async () => new Map((await readers[turn++ % readers.length]!.list('opsctl-rehearsal/')).map((kv) => [kv.key, kv.value])), {
        timeoutMs: o.readBackMs ?? 60_000,
        pollMs: 500,
        firstPollMs: 50,
        what: "the clone's load read back",
      }).catch(() => undefined);
      if (!held) return { writes: { acked: acked.length, lost: 0, failed, unread: true }, probes, probeFailures };
      const lost = acked.filter((key) => held.get(key) !== key.slice(-6).replace(/^0+(?=\d)/, '')).length;
      return { writes: { acked: acked.length, lost, failed }, probes, probeFailures };
    },
  };
}
