import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { labelsClient } from './shared.js';

export async function run(_opts: Record<string, never>, ctx: Context): Promise<CommandResult> {
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
