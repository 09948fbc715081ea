import type { Context } from '../../context.js';
import { ApiError, UsageError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { labelToFile } from '../../labels/from-service.js';
import { labelName } from '../../labels/names.js';
import type { Label, LabelPermission } from '../../labels/types.js';
import { labelRef, labelsClient } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './export.spec.js';
import { yamlLib } from '../../core/yaml.js';

export type Options = OptionsOf<typeof spec>;

/**
 * `labels export LABEL|--all`: the label(s) in the apply-file format, so that `export | apply` changes
 * nothing against the same service and copies the labels to another one. Ids are left out (a copy
 * matches by title and names); disabled fields and choices are left out (apply leaves them disabled).
 * YAML by default, the same objects as JSON with --json.
 */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  if (opts.all === Boolean(opts.label)) {
    throw new UsageError(opts.all ? 'give a label or --all, not both' : 'give a label to export, or --all', {
      field: 'label',
      hint: 'e.g. opsctl labels export 0a1b2c, or opsctl labels export --all > labels.yaml',
    });
  }
  const client = await labelsClient(ctx, { admin: opts.admin });
  const labels: Label[] = opts.label ? [await client.get(labelName(await labelRef(client, opts.label)))] : await client.list({ minimumRole: 'EDITOR' });
  const skipped = labels.filter((l) => l.labelType !== 'SHARED' && l.labelType !== 'ADMIN');
  if (skipped.length) ctx.io.warn(`left out ${skipped.map((l) => `labels/${l.id} (${l.labelType})`).join(', ')}: only SHARED and ADMIN labels can be applied`);
  const files: Array<Record<string, unknown>> = [];
  for (const label of labels.filter((l) => !skipped.includes(l))) {
    let permissions: LabelPermission[] | undefined;
    try {
      permissions = await client.permissions(`labels/${label.id}`);
    } catch (err) {
      if (!(err instanceof ApiError && (err.status === 403 || err.status === 404))) throw err;
      ctx.io.warn(`labels/${label.id}: permissions left out (${err.message}); apply will leave them as they are`);
    }
    files.push(labelToFile(label, { ids: false, permissions }));
  }
  const data = opts.label ? files[0] : files;
  const text = (await yamlLib()).stringify(data, { lineWidth: 0 }).trimEnd();
  return { data, text, ...(opts.all ? { message: `exported ${files.length} label${files.length === 1 ? '' : 's'}` } : {}) };
}
