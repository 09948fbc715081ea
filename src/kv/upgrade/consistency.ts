import { KvClient } from '../cluster/client.js';
import { findEtcdctl } from '../cluster/etcdctl.js';
import { compareHashes, type HashCheck } from '../cluster/hashkv.js';
import type { ClusterObservation } from '../cluster/types.js';
import type { Look, StepEnv } from './options.js';

/**
 * Every member's KV hash at one revision (HashKV), compared: "ok", "divergent" (naming the member and
 * both hashes) or "not checked" and why (3.2, no etcdctl for real members, an error asking). A look at
 * every member taken a moment ago (`seen`: the pre-flight's, the poll that saw a member back) gives
 * each one's version and revision: no round trip to ask them again.
 */
export async function hashesNow(
  env: Pick<StepEnv<Look | 'exec' | 'etcdctl'>, 'o' | 'etcdctl' | 'real'>,
  at: string,
  seen?: ClusterObservation,
): Promise<HashCheck> {
  const { o } = env;
  const members = o.cluster.members;
  const versions: Record<string, string | undefined> = {};
  const revisions: Record<string, string | undefined> = {};
  const looked = seen?.members.filter((x) => x.healthy && x.serverVersion);
  if (looked?.length === members.length) {
    for (const x of looked) [versions[x.name], revisions[x.name]] = [x.serverVersion, x.revision];
  } else {
    await Promise.all(
      members.map(async (m) => {
        versions[m.name] = await new KvClient(m.endpoint, { session: o.session, timeoutMs: o.timeouts.requestMs, debug: o.debug })
          .version()
          .then((v) => v.server)
          .catch(() => undefined);
      }),
    );
  }
  try {
    return await compareHashes(
      { session: o.session, timeoutMs: o.timeouts.snapshotMs, exec: o.exec, etcdctl: env.etcdctl ?? findEtcdctl(o.etcdctl), real: env.real, debug: o.debug },
      members,
      versions,
      at,
      looked?.length === members.length ? revisions : undefined,
    );
  } catch (err) {
    return { at, result: 'not-checked', hashes: [], notChecked: [], detail: `not checked: ${(err as Error).message}` };
  }
}
