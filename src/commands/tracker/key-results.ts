import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { keyResults } from '@opsctl/shared/tracker/resources/key-results.js';
import { objectives } from '@opsctl/shared/tracker/resources/objectives.js';
import { columns, trackerClient } from './shared.js';
import type { OptionsOf } from '../spec.js';
import type { keyResultsSpec } from './key-results.spec.js';

export type KeyResultsOptions = OptionsOf<ReturnType<typeof keyResultsSpec>>;

/**
 * `tracker key-results list --objective NAME`: the API has no list of key results, so it reads the
 * objective (found by name with one list of objectives, or by id) and then each of its key_result_ids.
 */
export async function run(opts: KeyResultsOptions, ctx: Context): Promise<CommandResult> {
  const client = await trackerClient(ctx, keyResults);
  const id = await client.names.resolve('objective', opts.objective, '--objective');
  const objective = await client.get<{ key_result_ids?: string[] }>(objectives, id);
  const items: unknown[] = [];
  for (const krId of objective.key_result_ids ?? []) items.push(await client.get(keyResults, krId));
  return { data: items, columns: columns(keyResults.columns) };
}
