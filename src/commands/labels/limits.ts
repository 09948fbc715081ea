import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { labelsClient } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './limits.spec.js';

export type Options = OptionsOf<typeof spec>;

export async function run(_opts: Options, ctx: Context): Promise<CommandResult> {
  const l = await (await labelsClient(ctx)).limits();
  const fl = l.fieldLimits ?? {};
  const rows = [
    ['maxFields', l.maxFields],
    ['maxTitleLength', l.maxTitleLength],
    ['maxDescriptionLength', l.maxDescriptionLength],
    ['field maxDisplayNameLength', fl.maxDisplayNameLength],
    ['field maxIdLength', fl.maxIdLength],
    ['selection maxChoices', fl.selectionLimits?.maxChoices],
    ['selection list maxEntries', fl.selectionLimits?.listLimits?.maxEntries],
    ['user list maxEntries', fl.userLimits?.listLimits?.maxEntries],
  ];
  return { data: l, text: rows.map(([k, v]) => `${k}\t${v ?? ''}`).join('\n') };
}
