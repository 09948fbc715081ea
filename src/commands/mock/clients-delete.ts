import type { Context } from '../../context.js';
import { confirmDestructive, notDone } from '../../core/confirm.js';
import type { CommandResult } from '../../core/output.js';
import { clientPath, consoleApi } from './lib/clients-shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './clients-delete.spec.js';

export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  const api = await consoleApi(ctx);
  const current = await api.get<{ type: string; name: string; status: string }>(clientPath(opts.clientId)); // a 404 before asking
  const what = {
    action: `delete OAuth client ${opts.clientId} (its users get deleted_client; restorable for 30 days)`,
    items: [`${opts.clientId} "${current.name}" (${current.type}, ${current.status})`],
    dryRun: opts.dryRun,
  };
  const decision = await confirmDestructive(ctx, what);
  if (decision !== 'proceed') return notDone(decision, what);
  const view = await api.delete<Record<string, unknown>>(clientPath(opts.clientId));
  return { data: view, message: `deleted ${opts.clientId}; restorable until ${String(view.restorable_until)} (opsctl mock clients restore ${opts.clientId})` };
}
