import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { ADMIN, CLIENT_COLUMNS, consoleApi } from './lib/clients-shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './clients-list.spec.js';

export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  const api = await consoleApi(ctx);
  const { clients } = await api.get<{ clients: Array<Record<string, unknown>> }>(`${ADMIN}/clients`);
  return { data: opts.active ? clients.filter((c) => c.status === 'active') : clients, columns: CLIENT_COLUMNS };
}
