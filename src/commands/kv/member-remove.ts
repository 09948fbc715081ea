import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import { parseId } from '../../kv/ops/ids.js';
import { removeMember } from '../../kv/ops/members.js';
import { memberChangeLine } from '../../kv/ops/simple.js';
import { etcdSaid, reach, shaped } from './lib/ops.js';
import type { spec } from './member-remove.spec.js';

/** `kv member remove ID`: the member leaves the cluster (stop its process after). */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  const id = parseId(opts.memberId, 'member-id');
  const r = await reach(ctx, opts);
  const { clusterId } = await r.any((c) => removeMember(c, id)).catch((err) => etcdSaid(err, `member remove ${opts.memberId}`));
  return shaped(opts, { data: { id: BigInt(id).toString(16), removed: true }, simple: [memberChangeLine(id, 'removed from', clusterId)] });
}
