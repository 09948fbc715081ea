import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { oneDelta } from './lib/delta.js';
import { findField } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './fields-delete.spec.js';

export type Options = OptionsOf<typeof spec>;

/** `labels fields delete`: one `deleteField` request. */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  return oneDelta(opts, ctx, (label) => {
    const field = findField(label, opts.field);
    const which = `field "${field.properties?.displayName}" (${field.id})`;
    return { request: { deleteField: { id: field.id } }, what: `deleted ${which}`, deletes: which };
  });
}
