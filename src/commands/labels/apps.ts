import type { Context } from '../../context.js';
import { ValidationError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { labelName } from '../../labels/names.js';
import { APPS } from '../../labels/schema.js';
import { labelsClient, writableRef } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './apps.spec.js';

export type Options = OptionsOf<typeof spec>;

export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  const apps = [...new Set(opts.apps.map((a) => a.toUpperCase()))];
  const bad = apps.filter((a) => !(APPS as readonly string[]).includes(a));
  if (bad.length)
    throw new ValidationError('apps', `unknown app${bad.length > 1 ? 's' : ''} ${bad.join(', ')}`, `use ${APPS.map((a) => a.toLowerCase()).join(' and/or ')}`);
  const client = await labelsClient(ctx, { admin: opts.admin });
  const name = labelName(await writableRef(client, opts.label));
  const label = await client.enabledApps(name, apps);
  const now = (label.enabledAppSettings?.enabledApps ?? []).map((a) => a.app).join(', ') || 'none';
  return { data: label, text: '', message: `${name}: enabled apps ${now}` };
}
