import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { ADMIN, consoleApi } from './lib/clients-shared.js';

export async function run(_opts: Record<string, never>, ctx: Context): Promise<CommandResult> {
  const api = await consoleApi(ctx);
  const { receivers } = await api.get<{ receivers: unknown[] }>(`${ADMIN}/events/receivers`);
  return { data: receivers, columns: [{ key: 'id' }, { key: 'client_id', header: 'client id' }, { key: 'url' }, { key: 'events' }] };
}
