import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { labelsClient } from './lib/shared.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './capabilities.spec.js';

export type Options = OptionsOf<typeof spec>;

export async function run(_opts: Options, ctx: Context): Promise<CommandResult> {
  return { data: await (await labelsClient(ctx)).capabilities() };
}
