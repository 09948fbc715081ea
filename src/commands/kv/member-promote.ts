import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import { listMembers, memberRef, promoteMember } from '../../kv/ops/members.js';
import { memberChangeLine } from '../../kv/ops/simple.js';
import { etcdSaid, reach, shaped } from './lib/ops.js';
import type { spec } from './member-promote.spec.js';

/** `kv member promote ID`: a learner becomes a voting member (etcd 3.4+; refused until it caught up). */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  const r = await reach(ctx, opts);
  const { members } = await r.any((c) => listMembers(c)).catch((err) => etcdSaid(err, 'member list'));
  const { id } = memberRef(opts.memberId, members, 'member');
  const { clusterId } = await r.any((c) => promoteMember(c, id)).catch((err) => etcdSaid(err, `member promote ${opts.memberId}`));
  return shaped(opts, { data: { id: BigInt(id).toString(16), promoted: true }, simple: [memberChangeLine(id, 'promoted in', clusterId)] });
}
