import type { Context } from '../../context.js';
import { ValidationError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { oneDelta } from './lib/delta.js';
import { findField } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './fields-add.spec.js';

export type Options = OptionsOf<typeof spec>;

/** `labels fields add`: one `createField` request. */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  const type = opts.type;
  if (opts.choices !== undefined && type !== 'selection') throw new ValidationError('--choices', `only a selection field has choices (--type is ${type})`);
  if (opts.list !== undefined && type !== 'selection' && type !== 'user') throw new ValidationError('--list', 'only selection and user fields hold lists');
  if (opts.dateFormat !== undefined && type !== 'date') throw new ValidationError('--date-format', 'only a date field has a date format');
  let listOptions: Record<string, number> | undefined;
  if (opts.list !== undefined) {
    const n = opts.list === true ? undefined : Number(opts.list);
    if (n !== undefined && (!Number.isInteger(n) || n < 1)) throw new ValidationError('--list', `"${opts.list}" is not a positive whole number`);
    listOptions = n === undefined ? {} : { maxEntries: n };
  }
  const choices =
    opts.choices
      ?.split(',')
      .map((c) => c.trim())
      .filter(Boolean) ?? [];
  const options: Record<string, unknown> =
    type === 'selection'
      ? { selectionOptions: { ...(listOptions ? { listOptions } : {}), choices: choices.map((displayName) => ({ properties: { displayName } })) } }
      : type === 'user'
        ? { userOptions: listOptions ? { listOptions } : {} }
        : type === 'date'
          ? { dateOptions: { dateFormatType: opts.dateFormat ?? 'LONG_DATE' } }
          : { [`${type}Options`]: {} };
  return oneDelta(opts, ctx, (label) => {
    const before = opts.before ? findField(label, opts.before).id : undefined;
    return {
      request: {
        createField: {
          field: {
            properties: { displayName: opts.name, ...(opts.required ? { required: true } : {}), ...(before ? { insertBeforeField: before } : {}) },
            ...options,
          },
        },
      },
      what: `added field "${opts.name}"`,
    };
  });
}
