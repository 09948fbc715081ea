import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { oneDelta, type OneLabelOptions } from './delta.js';
import { findChoice, selectionField } from './shared.js';

export interface ChoiceDisableOptions extends OneLabelOptions {
  field: string;
  choice: string;
  hideInSearch?: boolean;
  showInApply?: boolean;
}

/** `labels choices disable`: one `disableSelectionChoice` request with its disabled policy. */
export async function run(opts: ChoiceDisableOptions, ctx: Context): Promise<CommandResult> {
  return oneDelta(opts, ctx, (label) => {
    const field = selectionField(label, opts.field);
    const choice = findChoice(field, opts.choice);
    return {
      request: {
        disableSelectionChoice: {
          fieldId: field.id,
          id: choice.id,
          disabledPolicy: { hideInSearch: Boolean(opts.hideInSearch), showInApply: Boolean(opts.showInApply) },
        },
      },
      what: `disabled choice "${choice.properties?.displayName}" of "${field.properties?.displayName}"`,
    };
  });
}
