import type { Context } from '../../context.js';
import { confirmDestructive, notDone } from '../../core/confirm.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import { parseId } from '../../kv/ops/ids.js';
import { listMembers, removeMember } from '../../kv/ops/members.js';
import { memberChangeLine } from '../../kv/ops/simple.js';
import { etcdSaid, reach, shaped } from './lib/ops.js';
import type { spec } from './member-remove.spec.js';

/** `kv member remove ID`: the member leaves the cluster (stop its process after); asked first, as every removal is. */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  const id = parseId(opts.memberId, 'member-id');
  const hex = BigInt(id).toString(16);
  const r = await reach(ctx, opts);
  const { members } = await r.any((c) => listMembers(c)).catch((err) => etcdSaid(err, 'member list'));
  const m = members.find((x) => BigInt(x.id) === BigInt(id));
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
