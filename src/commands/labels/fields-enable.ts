import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { oneDelta } from './lib/delta.js';
import { findField } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './fields-enable.spec.js';

export type Options = OptionsOf<typeof spec>;

/** `labels fields enable`: one `enableField` request. */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  return oneDelta(opts, ctx, (label) => {
    const field = findField(label, opts.field);
    return { request: { enableField: { id: field.id } }, what: `enabled field "${field.properties?.displayName}"` };
  });
}
