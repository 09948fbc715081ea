import type { Context } from '../../context.js';
import { ValidationError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { stories } from '@opsctl/shared/tracker/resources/stories.js';
import { workflows } from '@opsctl/shared/tracker/resources/workflows.js';
import { resolveState, type WorkflowRef } from '../../tracker/workflow-states.js';
import { trackerClient } from './shared.js';
import type { OptionsOf } from '../spec.js';
import type { moveSpec } from './move.spec.js';

export type MoveOptions = OptionsOf<ReturnType<typeof moveSpec>>;

/** The fields of a story the move reads. */
interface StoryRef {
  id: number;
  workflow_id?: number;
  workflow_state_id?: number;
}

/** `stories move ID --state NAME`: resolves the name among the story's workflow states, then one update. */
export async function run(opts: MoveOptions, ctx: Context): Promise<CommandResult> {
  if (!/^\d{1,15}$/.test(opts.id)) throw new ValidationError('<story-id>', `"${opts.id}" is not an integer id`, 'see: opsctl tracker stories --help');
  if (!opts.state?.trim()) throw new ValidationError('--state', 'is required', 'pass --state "In Progress" (see: opsctl tracker workflows states ID)');
  const client = await trackerClient(ctx, stories);
  const [story, all] = await Promise.all([client.get<StoryRef>(stories, opts.id), client.list<WorkflowRef>(workflows)]);
  const state = resolveState(all, story.workflow_id, opts.state);
  if (story.workflow_state_id === state.id) {
    ctx.io.info(`story ${story.id} is already in "${state.name}"`);
    return { data: story, text: '' };
  }
  const from = all.flatMap((w) => w.states).find((s) => s.id === story.workflow_state_id)?.name ?? String(story.workflow_state_id);
  const moved = await client.update<StoryRef>(stories, opts.id, { workflow_state_id: state.id });
  return { data: moved, text: '', message: `story ${moved.id}: ${from} → ${state.name}` };
}
