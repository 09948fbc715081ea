import type { Context } from '../../context.js';
import { ValidationError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { oneDelta } from './lib/delta.js';
import { findField } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './fields-update.spec.js';

export type Options = OptionsOf<typeof spec>;

/** `labels fields update`: one `updateField` request with the mask of what was given. */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  return oneDelta(opts, ctx, (label) => {
    const field = findField(label, opts.field);
    const fname = field.properties?.displayName;
    const mask: string[] = [];
    const properties: Record<string, unknown> = { displayName: opts.name ?? fname };
    if (opts.name !== undefined) mask.push('displayName');
    if (opts.required !== undefined) {
      mask.push('required');
      properties.required = opts.required;
    }
    if (opts.before !== undefined) {
      mask.push('insertBeforeField');
      properties.insertBeforeField = opts.before === '' ? '' : findField(label, opts.before).id;
    }
    if (!mask.length) throw new ValidationError('field', 'nothing to change', 'give --name, --required/--no-required or --before');
    return { request: { updateField: { id: field.id, properties, updateMask: mask.join(',') } }, what: `updated field "${fname}" (${mask.join(', ')})` };
  });
}
