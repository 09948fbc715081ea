import type { Context } from '../../context.js';
import { ValidationError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { statusLine } from '../../labels/format.js';
import { labelName } from '../../labels/names.js';
import type { DeltaRequest } from '../../labels/types.js';
import { findChoice, findField, labelsClient, writableRef } from './shared.js';

export interface ChoiceOptions {
  verb: 'add' | 'update' | 'enable' | 'disable' | 'delete';
  label: string;
  field: string;
  choice?: string;
  name?: string;
  description?: string;
  before?: string;
  hideInSearch?: boolean;
  showInApply?: boolean;
  admin?: boolean;
}

/** `labels choices add|update|enable|disable|delete`: one `:delta` request, guarded by the revision just read. */
export async function run(opts: ChoiceOptions, ctx: Context): Promise<CommandResult> {
  const name = labelName(writableRef(opts.label));
  const client = await labelsClient(ctx, opts.admin);
  const label = await client.get(name);
  const field = findField(label, opts.field);
  if (!field.selectionOptions) throw new ValidationError('field', `field "${field.properties?.displayName}" is not a selection field`);
  const fname = field.properties?.displayName;
  let request: DeltaRequest;
  let what: string;
  if (opts.verb === 'add') {
    const before = opts.before ? findChoice(field, opts.before).id : undefined;
    request = {
      createSelectionChoice: {
        fieldId: field.id,
        choice: { properties: { displayName: opts.name, ...(opts.description ? { description: opts.description } : {}), ...(before ? { insertBeforeChoice: before } : {}) } },
      },
    };
    what = `added choice "${opts.name}" to "${fname}"`;
  } else {
    const choice = findChoice(field, opts.choice!);
    const cname = choice.properties?.displayName;
    if (opts.verb === 'update') {
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
      request = { updateSelectionChoiceProperties: { fieldId: field.id, id: choice.id, properties, updateMask: mask.join(',') } };
      what = `updated choice "${cname}" of "${fname}" (${mask.join(', ')})`;
    } else if (opts.verb === 'disable') {
      request = { disableSelectionChoice: { fieldId: field.id, id: choice.id, disabledPolicy: { hideInSearch: Boolean(opts.hideInSearch), showInApply: Boolean(opts.showInApply) } } };
      what = `disabled choice "${cname}" of "${fname}"`;
    } else {
      request = { [`${opts.verb}SelectionChoice`]: { fieldId: field.id, id: choice.id } };
      what = `${opts.verb}d choice "${cname}" of "${fname}"`;
    }
  }
  const res = await client.delta(name, [request], label.revisionId);
  const updated = res.updatedLabel ?? (await client.get(name));
  return { data: res, text: '', message: `${what}; ${statusLine(updated)}` };
}
