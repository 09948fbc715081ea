import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import { listMembers } from '../../kv/ops/members.js';
import { memberLine, memberRow } from '../../kv/ops/simple.js';
import { boxTable, etcdctlJson, MEMBER_HEADERS } from '../../kv/ops/etcdctl-out.js';
import { reach, shaped } from './lib/ops.js';
import type { spec } from './member-list.spec.js';

/** `kv member list`: the cluster's own member list (etcdctl's columns; ids in hex). */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  const r = await reach(ctx, opts);
  const { members, raw } = await r.any((c) => listMembers(c));
  const data = members.map((m) => ({
    id: BigInt(m.id).toString(16),
    status: m.status,
    name: m.name,
    peer_urls: m.peerUrls,
    client_urls: m.clientUrls,
    learner: m.isLearner,
  }));
  return shaped(opts, {
    data,
    columns: [
      'id',
      'status',
      'name',
      { key: 'peer_urls', header: 'peer urls', get: (x: (typeof data)[number]) => x.peer_urls.join(',') },
      { key: 'client_urls', header: 'client urls', get: (x: (typeof data)[number]) => x.client_urls.join(',') },
      'learner',
    ],
    simple: members.map(memberLine),
    etcdctlJson: etcdctlJson(raw),
    etcdctlTable: boxTable(MEMBER_HEADERS, members.map(memberRow)),
  });
}
