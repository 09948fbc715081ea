import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import { listAlarms } from '../../kv/ops/maintenance.js';
import { alarmLine } from '../../kv/ops/simple.js';
import { reach, shaped } from './lib/ops.js';
import type { spec } from './alarm-list.spec.js';

/** `kv alarm list`: each raised alarm with its member (none: no line, exit 0, as etcdctl). */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  const r = await reach(ctx, opts);
  const alarms = await r.any((c) => listAlarms(c));
  const data = alarms.map((a) => ({ member_id: BigInt(a.memberId).toString(16), alarm: a.alarm }));
  return shaped(opts, { data, columns: ['member_id', 'alarm'], simple: alarms.map(alarmLine), message: alarms.length ? undefined : 'no alarm raised' });
}
