import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { clientPath, consoleApi } from './lib/clients-shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './clients-get.spec.js';

export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  const api = await consoleApi(ctx);
  return { data: await api.get(clientPath(opts.clientId)) };
}
