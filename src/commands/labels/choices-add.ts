import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { oneDelta } from './lib/delta.js';
import { findChoice, selectionField } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './choices-add.spec.js';

export type Options = OptionsOf<typeof spec>;

/** `labels choices add`: one `createSelectionChoice` request. */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
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
