import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import type { OptionsOf } from '../spec.js';
import { changeLifecycle } from './lib/lifecycle.js';
import type { spec } from './publish.spec.js';

export type Options = OptionsOf<typeof spec>;

/** Publishes the draft changes, guarded by the revision just read. */
export async function run(opts: Options, ctx: Context): Promise<CommandResult> {
  return changeLifecycle('publish', opts, ctx);
}
