import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { oneDelta } from './lib/delta.js';
import { findField } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './fields-disable.spec.js';

export type Options = OptionsOf<typeof spec>;

/** `labels fields disable`: one `disableField` request with its disabled policy. */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  return oneDelta(opts, ctx, (label) => {
    const field = findField(label, opts.field);
    return {
      request: { disableField: { id: field.id, disabledPolicy: { hideInSearch: Boolean(opts.hideInSearch), showInApply: Boolean(opts.showInApply) } } },
      what: `disabled field "${field.properties?.displayName}"`,
    };
  });
}
