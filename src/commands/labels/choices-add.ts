import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { oneDelta, type OneLabelOptions } from './delta.js';
import { findChoice, selectionField } from './shared.js';

export interface ChoiceAddOptions extends OneLabelOptions {
  field: string;
  name: string;
  description?: string;
  before?: string;
}

/** `labels choices add`: one `createSelectionChoice` request. */
export async function run(opts: ChoiceAddOptions, ctx: Context): Promise<CommandResult> {
  return oneDelta(opts, ctx, (label) => {
    const field = selectionField(label, opts.field);
    const before = opts.before ? findChoice(field, opts.before).id : undefined;
    const properties = {
      displayName: opts.name,
      ...(opts.description ? { description: opts.description } : {}),
      ...(before ? { insertBeforeChoice: before } : {}),
    };
    return {
      request: { createSelectionChoice: { fieldId: field.id, choice: { properties } } },
      what: `added choice "${opts.name}" to "${field.properties?.displayName}"`,
    };
  });
}
