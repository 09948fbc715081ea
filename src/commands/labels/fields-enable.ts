import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { oneDelta, type OneLabelOptions } from './delta.js';
import { findField } from './shared.js';

/** `labels fields enable`: one `enableField` request. */
export async function run(opts: OneLabelOptions & { field: string }, ctx: Context): Promise<CommandResult> {
  return oneDelta(opts, ctx, (label) => {
    const field = findField(label, opts.field);
    return { request: { enableField: { id: field.id } }, what: `enabled field "${field.properties?.displayName}"` };
  });
}
