import type { Context } from '../../context.js';
import { ValidationError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { clientPath, consoleApi } from './lib/clients-shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './clients-verify.spec.js';

/** Ownership verification of a mobile A or extension client, as `account`. */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  if (!/^[^@\s]+@[^@\s]+$/.test(opts.account)) throw new ValidationError('--account', `"${opts.account}" is not an e-mail address`);
  const api = await consoleApi(ctx);
  const view = await api.post(`${clientPath(opts.clientId)}/verify-ownership`, { account: opts.account });
  return { data: view, message: `ownership of ${opts.clientId} verified by ${opts.account}` };
}
