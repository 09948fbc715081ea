import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import { changeLifecycle } from './lib/lifecycle.js';
import type { spec } from './disable.spec.js';

export type Options = OptionsOf<typeof spec>;

/** Disables a published label (its policy: --hide-in-search, --show-in-apply), guarded by the revision just read. */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  return changeLifecycle('disable', opts, ctx);
}
