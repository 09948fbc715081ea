import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { ADMIN, consoleApi } from './lib/clients-shared.js';

/** Tries every pending SET now instead of at its next retry. */
export async function run(_opts: Record<string, never>, ctx: Context): Promise<CommandResult> {
  const api = await consoleApi(ctx);
  const c = await api.post<{ pending: number; delivered: number; rejected: number }>(`${ADMIN}/events/deliver`);
  return { data: c, message: `${c.delivered} delivered, ${c.pending} pending, ${c.rejected} rejected` };
}
