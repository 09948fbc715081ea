import { formatSize } from '@opsctl/shared/size.js';
import type { MemberSpec } from '../cluster/cluster-file.js';
import { KvClient } from '../cluster/client.js';
import type { StepEnv } from './options.js';

/**
 * --defrag: the member's own db file defragmented (etcd's maintenance Defragment, on its gateway:
 * 3.2 to 3.6 answer it) right before its snapshot, so the snapshot and the data-dir copy carry no
 * free pages. The member's reads and writes wait while it runs (etcd's own note): one member at a
 * time, as the upgrade goes. Returns what it freed: the db size before and after (status dbSize).
 */
export async function defragMember(
  env: StepEnv<'debug' | 'session' | 'timeouts'>,
  m: MemberSpec,
): Promise<{ before?: number; after?: number; detail: string }> {
  const { o } = env;
  const c = new KvClient(m.endpoint, { session: o.session, timeoutMs: o.timeouts.requestMs, debug: o.debug });
  const before = (await c.status()).dbSize;
  // Defragment takes as long as the db file is large: the snapshot's timeout, not a request's.
  await new KvClient(m.endpoint, { session: o.session, timeoutMs: o.timeouts.snapshotMs, debug: o.debug }).defragment();
  const after = (await c.status()).dbSize;
  if (before === undefined || after === undefined) return { before, after, detail: `${m.name} defragmented (its status reports no db size)` };
  return {
    before,
    after,
    detail: `${m.name} defragmented: db ${formatSize(before)} → ${formatSize(after)} (${formatSize(Math.max(0, before - after))} freed)`,
  };
}
