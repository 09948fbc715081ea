import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import { listMembers, memberRef, updateMember } from '../../kv/ops/members.js';
import { memberChangeLine } from '../../kv/ops/simple.js';
import { peerUrls } from './member-add.js';
import { etcdSaid, reach, shaped } from './lib/ops.js';
import type { spec } from './member-update.spec.js';

/** `kv member update ID --peer-urls …`: the member's peer URLs changed. */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  const urls = peerUrls(opts.peerUrls);
  const r = await reach(ctx, opts);
  const { members } = await r.any((c) => listMembers(c)).catch((err) => etcdSaid(err, 'member list'));
  const { id } = memberRef(opts.memberId, members, 'member');
  const { clusterId } = await r.any((c) => updateMember(c, id, urls)).catch((err) => etcdSaid(err, `member update ${opts.memberId}`));
  return shaped(opts, { data: { id: BigInt(id).toString(16), peer_urls: urls }, simple: [memberChangeLine(id, 'updated in', clusterId)] });
}
