import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { oneDelta, type OneLabelOptions } from './delta.js';
import { findChoice, selectionField } from './shared.js';

/** `labels choices delete`: one `deleteSelectionChoice` request. */
export async function run(opts: OneLabelOptions & { field: string; choice: string }, ctx: Context): Promise<CommandResult> {
  return oneDelta(opts, ctx, (label) => {
    const field = selectionField(label, opts.field);
    const choice = findChoice(field, opts.choice);
    const which = `choice "${choice.properties?.displayName}" of "${field.properties?.displayName}"`;
    return { request: { deleteSelectionChoice: { fieldId: field.id, id: choice.id } }, what: `deleted ${which}`, deletes: which };
  });
}
