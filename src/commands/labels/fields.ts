import type { Context } from '../../context.js';
import { ValidationError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { statusLine } from '../../labels/format.js';
import { labelName } from '../../labels/names.js';
import type { DeltaRequest } from '../../labels/types.js';
import { findField, labelsClient, writableRef } from './shared.js';

export interface FieldOptions {
  verb: 'add' | 'update' | 'enable' | 'disable' | 'delete';
  label: string;
  field?: string;
  name?: string;
  type?: 'text' | 'integer' | 'date' | 'selection' | 'user';
  required?: boolean;
  choices?: string;
  list?: boolean | string;
  dateFormat?: string;
  before?: string;
  hideInSearch?: boolean;
  showInApply?: boolean;
  admin?: boolean;
}

/** `labels fields add|update|enable|disable|delete`: one `:delta` request, guarded by the revision just read. */
export async function run(opts: FieldOptions, ctx: Context): Promise<CommandResult> {
  const name = labelName(writableRef(opts.label));
  const client = await labelsClient(ctx, opts.admin);
  const label = await client.get(name);
  let request: DeltaRequest;
  let what: string;
  if (opts.verb === 'add') {
    const type = opts.type!;
    if (opts.choices !== undefined && type !== 'selection') throw new ValidationError('--choices', `only a selection field has choices (--type is ${type})`);
    if (opts.list !== undefined && type !== 'selection' && type !== 'user') throw new ValidationError('--list', 'only selection and user fields hold lists');
    if (opts.dateFormat !== undefined && type !== 'date') throw new ValidationError('--date-format', 'only a date field has a date format');
    let listOptions: Record<string, number> | undefined;
    if (opts.list !== undefined) {
      const n = opts.list === true ? undefined : Number(opts.list);
      if (n !== undefined && (!Number.isInteger(n) || n < 1)) throw new ValidationError('--list', `"${opts.list}" is not a positive whole number`);
      listOptions = n === undefined ? {} : { maxEntries: n };
    }
    const choices = opts.choices?.split(',').map((c) => c.trim()).filter(Boolean) ?? [];
    const options: Record<string, unknown> =
      type === 'selection'
        ? { selectionOptions: { ...(listOptions ? { listOptions } : {}), choices: choices.map((displayName) => ({ properties: { displayName } })) } }
        : type === 'user'
          ? { userOptions: listOptions ? { listOptions } : {} }
          : type === 'date'
            ? { dateOptions: { dateFormatType: opts.dateFormat ?? 'LONG_DATE' } }
            : { [`${type}Options`]: {} };
    const before = opts.before ? findField(label, opts.before).id : undefined;
    request = { createField: { field: { properties: { displayName: opts.name, ...(opts.required ? { required: true } : {}), ...(before ? { insertBeforeField: before } : {}) }, ...options } } };
    what = `added field "${opts.name}"`;
  } else {
    const field = findField(label, opts.field!);
    const fname = field.properties?.displayName;
    if (opts.verb === 'update') {
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
      request = { updateField: { id: field.id, properties, updateMask: mask.join(',') } };
      what = `updated field "${fname}" (${mask.join(', ')})`;
    } else if (opts.verb === 'disable') {
      request = { disableField: { id: field.id, disabledPolicy: { hideInSearch: Boolean(opts.hideInSearch), showInApply: Boolean(opts.showInApply) } } };
      what = `disabled field "${fname}"`;
    } else {
      request = { [`${opts.verb}Field`]: { id: field.id } };
      what = `${opts.verb}d field "${fname}"`;
    }
  }
  const res = await client.delta(name, [request], label.revisionId);
  const updated = res.updatedLabel ?? (await client.get(name));
  return { data: res, text: '', message: `${what}; ${statusLine(updated)}` };
}
