import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { ValidationError } from '../../core/errors.js';
import { integrityProblem, type ClientType } from '@opsctl/mock/console';
import { ADMIN, consoleApi, FIELD_FLAGS, fieldsFromFlags, validateFields } from './lib/clients-shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './clients-create.spec.js';

export async function run(opts: OptionsOf<typeof spec>, ctx: Context): Promise<CommandResult> {
  const body: Record<string, unknown> = { type: opts.type, ...fieldsFromFlags(opts) };
  if (opts.clientId !== undefined) body.client_id = opts.clientId;
  if (opts.customScheme) body.custom_scheme_enabled = true;
  if (opts.integrity) body.integrity = true;
  validateFields(body, 'create');
  if (opts.integrity) {
    const problem = integrityProblem({ team_id: opts.teamId, bundle_id: opts.bundleId });
    if (problem) throw new ValidationError(FIELD_FLAGS.get(problem.field) ?? problem.field, problem.message, problem.hint);
  }
  const api = await consoleApi(ctx);
  const created = await api.post<Record<string, unknown>>(`${ADMIN}/clients`, body);
  const secret = created.client_secret;
  if (!opts.showSecret) delete created.client_secret;
  const type = body.type as ClientType;
  const note = secret && !opts.showSecret ? ' (it has a client secret: pass --show-secret to print it, shown at creation only)' : '';
  return { data: created, message: `created ${type} client ${String(created.client_id)}${note}` };
}
