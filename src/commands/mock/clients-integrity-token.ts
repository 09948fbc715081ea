import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { clientPath, consoleApi } from './lib/clients-shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './clients-integrity-token.spec.js';

/** A valid integrity token for the app (the attestation service's stand-in): for testing an app's enforced requests. */
export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  const api = await consoleApi(ctx);
  const out = await api.post<{ token: string; expires_in: number }>(`${clientPath(opts.clientId)}/integrity-token`);
  return { data: out, text: out.token, message: `valid for ${out.expires_in} s of the mock's clock; send it as X-Integrity-Token` };
}
