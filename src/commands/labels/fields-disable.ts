import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { oneDelta, type OneLabelOptions } from './delta.js';
import { findField } from './shared.js';

export interface FieldDisableOptions extends OneLabelOptions {
  field: string;
  hideInSearch?: boolean;
  showInApply?: boolean;
}

/** `labels fields disable`: one `disableField` request with its disabled policy. */
export async function run(opts: FieldDisableOptions, ctx: Context): Promise<CommandResult> {
  return oneDelta(opts, ctx, (label) => {
    const field = findField(label, opts.field);
    return {
      request: { disableField: { id: field.id, disabledPolicy: { hideInSearch: Boolean(opts.hideInSearch), showInApply: Boolean(opts.showInApply) } } },
      what: `disabled field "${field.properties?.displayName}"`,
    };
  });
}
