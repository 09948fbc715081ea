import type { Context } from '../../../context.js';
import { confirmDestructive, notDone } from '../../../core/confirm.js';
import type { CommandResult } from '../../../core/output.js';
import { statusLine } from '../../../labels/format.js';
import { labelName } from '../../../labels/names.js';
import type { DeltaRequest, Label } from '../../../labels/types.js';
import { labelsClient, writableRef } from './shared.js';

/** What every field and choice verb is given: the label, and `--admin`. */
export interface OneLabelOptions {
  label: string;
  admin?: boolean;
  /** A deleting verb: show what would be deleted, send nothing. */
  dryRun?: boolean;
}

/**
 * The skeleton of the field and choice verbs: read the label, build one `:delta` request from it,
 * send it guarded by the revision just read (a concurrent change is refused, not overwritten).
 */
export async function oneDelta(
  opts: OneLabelOptions,
  ctx: Context,
  build: (label: Label) => { request: DeltaRequest; what: string; deletes?: string },
): Promise<CommandResult> {
  const client = await labelsClient(ctx, { admin: opts.admin });
  const name = labelName(await writableRef(client, opts.label));
  const label = await client.get(name);
  const { request, what, deletes } = build(label);
  if (deletes) {
    // a delete: the one confirmation rule
    const destructive = { action: `delete ${deletes} of ${name}`, items: [deletes], dryRun: opts.dryRun };
    const decision = await confirmDestructive(ctx, destructive);
    if (decision !== 'proceed') return notDone(decision, destructive);
  }
  const res = await client.delta(name, [request], label.revisionId);
  const updated = res.updatedLabel ?? (await client.get(name));
  return { data: res, text: '', message: `${what}; ${statusLine(updated)}` };
}
