import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import { UsageError } from '../../core/errors.js';
import { addMember } from '../../kv/ops/members.js';
import { memberAddLines } from '../../kv/ops/simple.js';
import { etcdSaid, reach, shaped } from './lib/ops.js';
import type { spec } from './member-add.spec.js';

/** Peer URLs as given: each an http(s) URL. */
export function peerUrls(text: string): string[] {
  const urls = text
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean);
  for (const u of urls) {
    let ok = false;
    try {
      ok = /^https?:$/.test(new URL(u).protocol);
    } catch {
      ok = false;
    }
    if (!ok) throw new UsageError(`--peer-urls: "${u}" is not an http(s) URL`, { field: '--peer-urls', hint: 'e.g. --peer-urls http://10.0.0.4:2380' });
  }
  if (!urls.length) throw new UsageError('--peer-urls: no URL given', { field: '--peer-urls', hint: 'e.g. --peer-urls http://10.0.0.4:2380' });
  return urls;
}

/** `kv member add NAME --peer-urls …`: the member added, and the ETCD_* settings its first start needs (as etcdctl prints them). */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  const urls = peerUrls(opts.peerUrls);
  const r = await reach(ctx, opts);
  const added = await r.any((c) => addMember(c, urls, { learner: Boolean(opts.learner) })).catch((err) => etcdSaid(err, `member add ${opts.name}`));
  const member = { ...added.member, name: opts.name };
  const lines = memberAddLines(
    member,
    added.clusterId,
    added.members.map((m) => (m.id === member.id ? member : m)),
  );
  const data = {
    id: BigInt(member.id).toString(16),
    name: opts.name,
    peer_urls: member.peerUrls,
    learner: member.isLearner,
    cluster_id: BigInt(added.clusterId).toString(16),
    settings: lines.slice(2),
  };
  return shaped(opts, { data, simple: lines });
}
