import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import { OpsError } from '../../core/errors.js';
import { endpointStatus, moveLeader } from '../../kv/ops/maintenance.js';
import { listMembers, memberRef } from '../../kv/ops/members.js';
import { etcdSaid, reach, shaped } from './lib/ops.js';
import type { spec } from './move-leader.spec.js';

/** `kv move-leader NAME|ID`: asks the current leader (found by every member's status) to hand over to that member. */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  const r = await reach(ctx, opts);
  const { members } = await r.any((c) => listMembers(c)).catch((err) => etcdSaid(err, 'member list'));
  const target = memberRef(opts.memberId, members, 'member').id;
  const seen = await Promise.all(
    r.members.map((m) =>
      endpointStatus(r.client(m)).then(
        (s) => ({ m, s }),
        () => undefined,
      ),
    ),
  );
  const leader = seen.find((x) => x?.s.isLeader);
  if (!leader)
    throw new OpsError('move-leader: no member answers as the leader', 1, { code: 'no_leader', hint: 'check the cluster with: opsctl kv endpoint status' });
  const hex = (id: string) => BigInt(id).toString(16);
  if (leader.s.id === target)
    return shaped(opts, { data: { from: hex(target), to: hex(target), moved: false }, simple: [`${hex(target)} is already the leader`] });
  await moveLeader(r.client(leader.m), target).catch((err) => etcdSaid(err, `move-leader ${opts.memberId}`));
  return shaped(opts, {
    data: { from: hex(leader.s.id), to: hex(target), moved: true },
    simple: [`Leadership transferred from ${hex(leader.s.id)} to ${hex(target)}`],
  });
}
