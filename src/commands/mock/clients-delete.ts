import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { clientPath, consoleApi } from './clients-shared.js';

export async function run(opts: { clientId: string }, ctx: Context): Promise<CommandResult> {
  const api = await consoleApi(ctx);
  await api.get(clientPath(opts.clientId)); // a 404 before asking
  const ok = await (await ctx.prompter()).confirm(`Delete OAuth client ${opts.clientId}? Its users get deleted_client; it can be restored for 30 days`, { flag: '--yes' });
  if (!ok) return { message: 'nothing deleted' };
  const view = await api.delete<Record<string, unknown>>(clientPath(opts.clientId));
  return { data: view, message: `deleted ${opts.clientId}; restorable until ${String(view.restorable_until)} (opsctl mock clients restore ${opts.clientId})` };
}
