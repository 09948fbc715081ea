import type { Context } from '../../context.js';
import { ValidationError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { INTEGRITY_ACTIONS } from '@opsctl/mock/console';
import { clientPath, consoleApi } from './lib/clients-shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './clients-integrity.spec.js';

export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  if (!(INTEGRITY_ACTIONS as readonly string[]).includes(opts.action)) {
    throw new ValidationError('action', `"${opts.action}" is not an integrity-check action`, `one of ${INTEGRITY_ACTIONS.join(', ')}`);
  }
  const api = await consoleApi(ctx);
  const view = await api.post<{ integrity: { configured: string; effective: string; pending: { effective_at: string } | null } }>(
    `${clientPath(opts.clientId)}/integrity`,
    { action: opts.action },
  );
  const i = view.integrity;
  const when = i.pending ? `; in force from ${i.pending.effective_at} (up to 15 minutes), ${i.effective} until then` : '';
  return { data: view, message: `integrity check of ${opts.clientId}: ${i.configured}${when}` };
}
