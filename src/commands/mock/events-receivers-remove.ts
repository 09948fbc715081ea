import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { ADMIN, consoleApi } from './clients-shared.js';

export async function run(opts: { id: string }, ctx: Context): Promise<CommandResult> {
  const api = await consoleApi(ctx);
  const r = await api.delete<{ pending_dropped: number }>(`${ADMIN}/events/receivers/${encodeURIComponent(opts.id)}`);
  return { data: r, message: `receiver ${opts.id} removed${r.pending_dropped ? `; ${r.pending_dropped} undelivered SET(s) dropped with it` : ''}` };
}
