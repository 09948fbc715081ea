import type { Context } from '../../context.js';
import { ValidationError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import type { ClientType } from '@opsctl/mock/console';
import { clientPath, consoleApi, fieldsFromFlags, onOff, validateFields } from './lib/clients-shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './clients-update.spec.js';

const CLEARABLE = new Map([
  ['store-id', 'store_id'],
  ['team-id', 'team_id'],
]);

export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  const body: Record<string, unknown> = fieldsFromFlags(opts);
  const scheme = onOff('--custom-scheme', opts.customScheme);
  if (scheme !== undefined) body.custom_scheme_enabled = scheme;
  for (const name of opts.clear ?? []) {
    const field = CLEARABLE.get(name);
    if (!field) throw new ValidationError('--clear', `"${name}" cannot be cleared`, `one of: ${[...CLEARABLE.keys()].join(', ')}`);
    if (field in body) throw new ValidationError('--clear', `--${name} is both set and cleared`);
    body[field] = null;
  }
  if (Object.keys(body).length === 0)
    throw new ValidationError('--name', 'nothing to change', 'give a field flag, e.g. --name "New name" or --custom-scheme on');
  const api = await consoleApi(ctx);
  // The type decides which fields exist: read it, check everything, then send one change.
  const current = await api.get<{ type: ClientType }>(clientPath(opts.clientId));
  validateFields(body, 'update', current.type);
  const updated = await api.patch(clientPath(opts.clientId), body);
  return { data: updated, message: `updated ${opts.clientId}` };
}
