import type { Context } from '../../context.js';
import { confirmDestructive, notDone } from '../../core/confirm.js';
import type { CommandResult } from '../../core/output.js';
import { ADMIN, consoleApi } from './lib/clients-shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './events-receivers-remove.spec.js';

export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  const api = await consoleApi(ctx);
  const { receivers } = await api.get<{ receivers: Array<{ id: string; url: string; client_id: string }> }>(`${ADMIN}/events/receivers`);
  const r = receivers.find((x) => x.id === opts.id);
  const what = {
    action: `remove receiver ${opts.id} (its undelivered SETs go with it)`,
    items: r ? [`${r.id} ${r.url} (client ${r.client_id})`] : [opts.id],
    dryRun: opts.dryRun,
  };
  const decision = await confirmDestructive(ctx, what);
  if (decision !== 'proceed') return notDone(decision, what);
  const out = await api.delete<{ pending_dropped: number }>(`${ADMIN}/events/receivers/${encodeURIComponent(opts.id)}`);
  return { data: out, message: `receiver ${opts.id} removed${out.pending_dropped ? `; ${out.pending_dropped} undelivered SET(s) dropped with it` : ''}` };
}
