import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { ADMIN, consoleApi } from './lib/clients-shared.js';

/** Runs the console's automatic deletion of unused clients now. */
export async function run(_opts: Record<string, never>, ctx: Context): Promise<CommandResult> {
  const api = await consoleApi(ctx);
  const out = await api.post<{ deleted: string[]; unused_client_days: number }>(`${ADMIN}/sweep`);
  return { data: out, text: out.deleted.join('\n'), message: `${out.deleted.length} client(s) unused for ${out.unused_client_days} days deleted` };
}
