import type { Context } from '../../context.js';
import { confirmDestructive, notDone } from '../../core/confirm.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import { listMembers, memberRef, removeMember } from '../../kv/ops/members.js';
import { memberChangeLine } from '../../kv/ops/simple.js';
import { etcdSaid, reach, shaped } from './lib/ops.js';
import type { spec } from './member-remove.spec.js';

/** `kv member remove ID`: the member leaves the cluster (stop its process after); asked first, as every removal is. */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  const r = await reach(ctx, opts);
  const { members } = await r.any((c) => listMembers(c)).catch((err) => etcdSaid(err, 'member list'));
  const { id, member: m } = memberRef(opts.memberId, members, 'member');
  const hex = BigInt(id).toString(16);
  const what = {
    action: `remove member ${hex} from the cluster (${members.length} members now)`,
    items: m ? [`${hex} ${m.name || '(unstarted)'} ${m.peerUrls.join(',')}${m.isLearner ? ' (learner)' : ''}`] : [`${hex} (not in the member list)`],
    dryRun: opts.dryRun,
  };
  const decision = await confirmDestructive(ctx, what);
  if (decision !== 'proceed') return notDone(decision, what);
  const { clusterId } = await r.any((c) => removeMember(c, id)).catch((err) => etcdSaid(err, `member remove ${opts.memberId}`));
  return shaped(opts, { data: { id: hex, removed: true }, simple: [memberChangeLine(id, 'removed from', clusterId)] });
}
