/**
 * The tracker's lookups that a write makes per story, answered from indexes (indexes.ts) in O(records
 * found) instead of a scan of the store: a story's tasks, comments, links and sub-tasks, a label by its
 * name, and the stories' first and last position.
 */
import { extreme, group, groupPositions, lookup } from '../../indexes.js';
import type { Label, Story, StoryComment, StoryLink, Task, TrackerState } from './records.js';

const storyIdOf = (x: { story_id: number }) => x.story_id;

/** A story's tasks, in store order (as `t.tasks.filter`). */
export function tasksOf(t: TrackerState, storyId: number): Task[] {
  return group(t.tasks, 'story_id', storyIdOf, storyId);
}

/** A story's comments, in store order. */
export function commentsOf(t: TrackerState, storyId: number): StoryComment[] {
  return group(t.storyComments, 'story_id', storyIdOf, storyId);
}

/** How many comments a story has (no record read). */
export function commentCount(t: TrackerState, storyId: number): number {
  return groupPositions(t.storyComments, 'story_id', storyIdOf, storyId).length;
}

/** The stories whose parent is `storyId`, in store order. */
export function subTasksOf(t: TrackerState, storyId: number): Story[] {
  return group(t.stories, 'parent_story_id', (s: Story) => s.parent_story_id, storyId);
}

/** The links a story is the subject or the object of, in store order. */
export function linksOf(t: TrackerState, storyId: number): StoryLink[] {
  const subject = groupPositions(t.storyLinks, 'subject_id', (l: StoryLink) => l.subject_id, storyId);
  const object = groupPositions(t.storyLinks, 'object_id', (l: StoryLink) => l.object_id, storyId);
  const positions = [...new Set([...subject, ...object])].sort((a, b) => a - b);
  return positions.map((pos) => t.storyLinks[pos]!);
}

/** The link `subject verb object`, if it exists. */
export function findLink(t: TrackerState, subjectId: number, objectId: number, verb: string): StoryLink | undefined {
  return group(t.storyLinks, 'subject_id', (l: StoryLink) => l.subject_id, subjectId).find((l) => l.object_id === objectId && l.verb === verb);
}

const lowerName = (l: Label) => String(l.name).toLowerCase();

/** The first label with this name, any case (labels.ts keeps the same index for its uniqueness check). */
export function labelByName(t: TrackerState, name: string): Label | undefined {
  return lookup(t.labels, 'name', lowerName, name.toLowerCase());
}

const positionOf = (s: Story) => s.position;

/** A position before every story's (`move_to: first`). */
export function firstPosition(t: TrackerState): number {
  return Math.min(1, extreme(t.stories, 'position', positionOf, 'min') ?? 1) - 1;
}

/** A position after every story's (a new story, `move_to: last`). */
export function lastPosition(t: TrackerState): number {
  return Math.max(0, extreme(t.stories, 'position', positionOf, 'max') ?? 0) + 1;
}
