import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import { disarmAlarms } from '../../kv/ops/maintenance.js';
import { alarmLine } from '../../kv/ops/simple.js';
import { reach, shaped } from './lib/ops.js';
import type { spec } from './alarm-disarm.spec.js';

/** `kv alarm disarm`: every raised alarm disarmed (free the space first, or NOSPACE is raised again at the next write). */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  const r = await reach(ctx, opts);
  const alarms = await r.any((c) => disarmAlarms(c));
  const data = alarms.map((a) => ({ member_id: BigInt(a.memberId).toString(16), alarm: a.alarm }));
  return shaped(opts, {
    data,
    columns: ['member_id', 'alarm'],
    simple: alarms.map(alarmLine),
    message: alarms.length ? `${alarms.length} alarm(s) disarmed` : 'no alarm raised',
  });
}
