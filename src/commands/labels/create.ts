import type { Context } from '../../context.js';
import { ValidationError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { LABEL_RECORD } from '../../labels/format.js';
import { labelsClient } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './create.spec.js';

export type Options = OptionsOf<typeof spec>;

export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  if (!opts.title.trim()) throw new ValidationError('--title', 'must not be empty');
  const admin = opts.type === 'admin';
  const client = await labelsClient(ctx);
  client.admin = admin;
  const label = await client.create({
    labelType: admin ? 'ADMIN' : 'SHARED',
    properties: { title: opts.title, ...(opts.description ? { description: opts.description } : {}) },
  });
  return {
    data: label,
    columns: LABEL_RECORD,
    message: `created labels/${label.id} (draft, revision ${label.revisionId}); publish it with: opsctl labels publish ${label.id}`,
  };
}
