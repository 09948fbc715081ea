import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { labelsClient } from './shared.js';

export async function run(_opts: Record<string, never>, ctx: Context): Promise<CommandResult> {
  return { data: await (await labelsClient(ctx)).capabilities() };
}
