import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { LABEL_RECORD } from '../../labels/format.js';
import { labelName } from '../../labels/names.js';
import { labelWebUrl } from '../../labels/web.js';
import { openWeb } from '../lib/web.js';
import { labelRef, labelsClient } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './get.spec.js';

export type Options = OptionsOf<typeof spec>;

export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  const client = await labelsClient(ctx, { admin: opts.admin });
  const ref = await labelRef(client, opts.label);
  // the label is read first either way: an unknown id is the service's 404, not a page that says nothing
  const label = await client.get(labelName(ref));
  if (opts.web) return openWeb(ctx, labelWebUrl(client.http.baseUrl, ref.id), `label ${ref.id}`);
  return { data: label, columns: LABEL_RECORD };
}
