import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { oneDelta } from './lib/delta.js';
import { findChoice, selectionField } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './choices-enable.spec.js';

export type Options = OptionsOf<typeof spec>;

/** `labels choices enable`: one `enableSelectionChoice` request. */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  return oneDelta(opts, ctx, (label) => {
    const field = selectionField(label, opts.field);
    const choice = findChoice(field, opts.choice);
    return {
      request: { enableSelectionChoice: { fieldId: field.id, id: choice.id } },
      what: `enabled choice "${choice.properties?.displayName}" of "${field.properties?.displayName}"`,
    };
  });
}
