import type { Context } from '../../../context.js';
import type { CommandResult } from '../../../core/output.js';
import { LABEL_COLUMNS, statusLine } from '../../../labels/format.js';
import { labelName } from '../../../labels/names.js';
import { labelsClient, writableRef } from './shared.js';

/** What publish, enable and disable are given (disable alone has the two policy flags). */
export interface LifecycleTarget {
  label: string;
  hideInSearch?: boolean;
  showInApply?: boolean;
  admin?: boolean;
}

/** publish / disable / enable, guarded by the revision just read (a concurrent change is refused, not overwritten). */
export async function changeLifecycle(verb: 'publish' | 'disable' | 'enable', opts: LifecycleTarget, ctx: Context): Promise<CommandResult> {
  const client = await labelsClient(ctx, { admin: opts.admin });
  const name = labelName(await writableRef(client, opts.label));
  const current = await client.get(name);
  const body: Record<string, unknown> = { writeControl: { requiredRevisionId: current.revisionId } };
  if (verb === 'disable') body.disabledPolicy = { hideInSearch: Boolean(opts.hideInSearch), showInApply: Boolean(opts.showInApply) };
  const label = await client.lifecycle(name, verb, body);
  return { data: label, columns: LABEL_COLUMNS.slice(0, 5), text: '', message: `${verb}${verb.endsWith('e') ? 'd' : 'ed'} ${statusLine(label)}` };
}
