import { ensureLabels, type TrackerState } from './common.js';
import { presentLabel } from './labels.js';
import type { StoryContents } from './records.js';
import { clone } from '../../tx.js';

/**
 * An entity template's story contents as stored: what the create or update body gave (so a story made
 * from the template gets the same labels, tasks and custom fields), with its labels made to exist.
 */
export function storeContents(t: TrackerState, contents: StoryContents, at: string): StoryContents {
  const { entity_type: _e, ...rest } = contents;
  if (Array.isArray(rest.labels)) ensureLabels(t, rest.labels, at);
  return rest;
}

/**
 * Story contents as the seed shapes them: `label_ids` and the full `labels`, `files` and `linked_files`
 * (the records the ids name), tasks with their `position`; the ids of the create body are not echoed.
 */
export function presentContents(t: TrackerState, contents: StoryContents = {}): Record<string, unknown> {
  const { labels, file_ids, linked_file_ids, tasks, ...rest } = clone(contents);
  const found = (Array.isArray(labels) ? labels : [])
    .map((p) => t.labels.find((l) => l.name.toLowerCase() === String(p?.name).toLowerCase()))
    .filter((l) => l !== undefined);
  const byId = <T extends { id: number }>(list: T[], ids: readonly number[] | undefined) =>
    (Array.isArray(ids) ? ids : [])
      .map((id) => list.find((x) => x.id === id))
      .filter((x) => x !== undefined)
      .map((x) => clone(x));
  return {
    ...rest,
    entity_type: 'story-contents',
    label_ids: found.map((l) => l.id),
    labels: found.map((l) => presentLabel(t, l, false)),
    files: byId(t.files, file_ids),
    linked_files: byId(t.linkedFiles, linked_file_ids),
    tasks: (Array.isArray(tasks) ? tasks : []).map((k, i) => ({
      description: k.description,
      complete: k.complete ?? false,
      owner_ids: k.owner_ids ?? [],
      ...(k.external_id !== undefined ? { external_id: k.external_id } : {}),
      position: i + 1,
    })),
  };
}
