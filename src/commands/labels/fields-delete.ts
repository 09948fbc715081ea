import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { oneDelta, type OneLabelOptions } from './delta.js';
import { findField } from './shared.js';

/** `labels fields delete`: one `deleteField` request. */
export async function run(opts: OneLabelOptions & { field: string }, ctx: Context): Promise<CommandResult> {
  return oneDelta(opts, ctx, (label) => {
    const field = findField(label, opts.field);
    const which = `field "${field.properties?.displayName}" (${field.id})`;
    return { request: { deleteField: { id: field.id } }, what: `deleted ${which}`, deletes: which };
  });
}
