import type { Context } from '../../context.js';
import { ValidationError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { oneDelta } from './lib/delta.js';
import { findChoice, selectionField } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './choices-update.spec.js';

export type Options = OptionsOf<typeof spec>;

/** `labels choices update`: one `updateSelectionChoiceProperties` request with the mask of what was given. */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  return oneDelta(opts, ctx, (label) => {
    const field = selectionField(label, opts.field);
    const choice = findChoice(field, opts.choice);
    const cname = choice.properties?.displayName;
    const mask: string[] = [];
    const properties: Record<string, unknown> = { displayName: opts.name ?? cname };
    if (opts.name !== undefined) mask.push('displayName');
    if (opts.description !== undefined) {
      mask.push('description');
      if (opts.description) properties.description = opts.description;
    }
    if (opts.before !== undefined) {
      mask.push('insertBeforeChoice');
      properties.insertBeforeChoice = opts.before === '' ? '' : findChoice(field, opts.before).id;
    }
    if (!mask.length) throw new ValidationError('choice', 'nothing to change', 'give --name, --description or --before');
    return {
      request: { updateSelectionChoiceProperties: { fieldId: field.id, id: choice.id, properties, updateMask: mask.join(',') } },
      what: `updated choice "${cname}" of "${field.properties?.displayName}" (${mask.join(', ')})`,
    };
  });
}
