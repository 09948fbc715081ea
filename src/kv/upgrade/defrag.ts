import { formatSize } from '@opsctl/shared/size.js';
import type { MemberSpec } from '../cluster/cluster-file.js';
import { KvClient } from '../cluster/client.js';
import { observeCluster } from '../cluster/observe.js';
import { waitFor } from '../cluster/wait.js';
import type { StepEnv } from './options.js';

/**
 * --defrag: the member's own db file defragmented (etcd's maintenance Defragment, on its gateway:
 * 3.2 to 3.6 answer it) right before its snapshot, so the snapshot and the data-dir copy carry no
 * free pages. The member's reads and writes wait while it runs (etcd's own note): one member at a
 * time, as the upgrade goes. The leader defragmented holds its heartbeats too, so its followers may elect
 * another meanwhile: the cluster is waited for (healthy, one leader, up to the healthy timeout) before the
 * snapshot and the gate before the stop, which would otherwise halt on the election opsctl caused (seen in CI:
 * "kv1 is not healthy (no leader)" right after kv1, the leader, was defragmented). Returns what it freed: the
 * db size before and after (status dbSize).
 */
export async function defragMember(
  env: StepEnv<'debug' | 'session' | 'timeouts' | 'cluster'>,
  m: MemberSpec,
): Promise<{ before?: number; after?: number; detail: string }> {
  const { o } = env;
  const c = new KvClient(m.endpoint, { session: o.session, timeoutMs: o.timeouts.requestMs, debug: o.debug });
  const before = (await c.status()).dbSize;
  // Defragment takes as long as the db file is large: the snapshot's timeout, not a request's.
  await new KvClient(m.endpoint, { session: o.session, timeoutMs: o.timeouts.snapshotMs, debug: o.debug }).defragment();
  await waitFor(
    async () => {
      const seen = await observeCluster(o.cluster.members, { session: o.session, timeoutMs: o.timeouts.requestMs, debug: o.debug });
      const leaders = new Set(seen.members.map((x) => x.leaderId ?? ''));
      return seen.members.every((x) => x.healthy) && leaders.size === 1 && !leaders.has('') && !leaders.has('0') ? true : undefined;
    },
    {
      timeoutMs: o.timeouts.healthyMs,
      pollMs: o.timeouts.pollMs,
      firstPollMs: 20,
      what: `the cluster healthy with one leader after ${m.name}'s defragmentation`,
    },
  );
  const after = (await c.status()).dbSize;
  if (before === undefined || after === undefined) return { before, after, detail: `${m.name} defragmented (its status reports no db size)` };
  return {
    before,
    after,
    detail: `${m.name} defragmented: db ${formatSize(before)} → ${formatSize(after)} (${formatSize(Math.max(0, before - after))} freed)`,
  };
}
