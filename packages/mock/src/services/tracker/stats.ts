import { STORY_STATES } from './state.js';
import type { TrackerState } from './common.js';
import type { Health, NoHealth, Story } from './records.js';

/** A story's phase for stats: the type of its workflow state. */
export function phase(story: { workflow_state_id?: number }): 'backlog' | 'unstarted' | 'started' | 'done' {
  return STORY_STATES.find((s) => s.id === story.workflow_state_id)?.type ?? 'unstarted';
}

/** Point and story counts of a set of stories, in the names the epic and iteration stats use. */
export function storyCounts(stories: readonly Story[]): Record<string, number> {
  const c = {
    num_points: 0,
    num_points_backlog: 0,
    num_points_done: 0,
    num_points_started: 0,
    num_points_unstarted: 0,
    num_stories_backlog: 0,
    num_stories_done: 0,
    num_stories_started: 0,
    num_stories_total: 0,
    num_stories_unestimated: 0,
    num_stories_unstarted: 0,
  };
  for (const s of stories) {
    const p = typeof s.estimate === 'number' ? s.estimate : 0;
    const ph = phase(s);
    c.num_points += p;
    c.num_stories_total++;
    if (typeof s.estimate !== 'number') c.num_stories_unestimated++;
    c[`num_points_${ph}` as keyof typeof c] += p;
    c[`num_stories_${ph}` as keyof typeof c]++;
  }
  return c;
}

/** `[{group_id, associated_stories_count}]` of the groups the stories belong to. */
export function associatedGroups(stories: readonly Story[]): Array<{ group_id: string; associated_stories_count: number }> {
  const groups = new Map<string, number>();
  for (const s of stories) if (s.group_id) groups.set(s.group_id, (groups.get(s.group_id) ?? 0) + 1);
  return [...groups].map(([group_id, n]) => ({ group_id, associated_stories_count: n }));
}

/** Current health of an epic: its latest record, or a "No Health" placeholder. */
export function currentHealth(t: TrackerState, epicId: number): Health | NoHealth {
  const mine = t.health.filter((h) => h.epic_id === epicId);
  return (
    mine[mine.length - 1] ?? {
      id: null,
      author_id: null,
      epic_id: epicId,
      objective_id: null,
      status: 'No Health',
      text: null,
      entity_type: 'health',
      created_at: null,
      updated_at: null,
    }
  );
}
