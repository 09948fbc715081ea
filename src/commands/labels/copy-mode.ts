import type { Context } from '../../context.js';
import { ValidationError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { labelName } from '../../labels/names.js';
import { COPY_MODES } from '../../labels/schema.js';
import { labelsClient, writableRef } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './copy-mode.spec.js';

export type Options = OptionsOf<typeof spec>;

export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  const mode = opts.mode.toUpperCase().replace(/-/g, '_');
  if (!(COPY_MODES as readonly string[]).includes(mode)) {
    throw new ValidationError(
      'mode',
      `"${opts.mode}" is not a copy mode`,
      `use ${COPY_MODES.map((m) => m.toLowerCase().replace(/_/g, '-'))
        .join(', ')
        .replace(/, ([^,]+)$/, ' or $1')}`,
    );
  }
  const client = await labelsClient(ctx, { admin: opts.admin });
  const name = labelName(await writableRef(client, opts.label));
  const label = await client.copyMode(name, mode);
  return { data: label, text: '', message: `${name}: copy mode ${label.appliedLabelPolicy?.copyMode} (takes effect now; not revisioned)` };
}
