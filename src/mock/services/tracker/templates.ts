import { ensureLabels, type TrackerState } from './common.js';
import { presentLabel } from './labels.js';

/**
 * An entity template's story contents as stored: what the create or update body gave (so a story made
 * from the template gets the same labels, tasks and custom fields), with its labels made to exist.
 */
export function storeContents(t: TrackerState, contents: Record<string, any>, at: string): Record<string, any> {
  const { entity_type: _e, ...rest } = contents;
  if (Array.isArray(rest.labels)) ensureLabels(t, rest.labels, at);
  return rest;
}

/**
 * Story contents as the seed shapes them: `label_ids` and the full `labels`, `files` and `linked_files`
 * (the records the ids name), tasks with their `position`; the ids of the create body are not echoed.
 */
export function presentContents(t: TrackerState, contents: Record<string, any> = {}): Record<string, any> {
  const { labels, file_ids, linked_file_ids, tasks, ...rest } = structuredClone(contents);
  const found = (Array.isArray(labels) ? labels : [])
    .map((p: any) => t.labels.find((l: any) => l.name.toLowerCase() === String(p?.name).toLowerCase()))
    .filter(Boolean);
  const byId = (list: any[], ids: unknown) => (Array.isArray(ids) ? ids : []).map((id) => list.find((x: any) => x.id === id)).filter(Boolean).map((x: any) => structuredClone(x));
  return {
    ...rest,
    entity_type: 'story-contents',
    label_ids: found.map((l: any) => l.id),
    labels: found.map((l: any) => presentLabel(t, l, false)),
    files: byId(t.files, file_ids),
    linked_files: byId(t.linkedFiles, linked_file_ids),
    tasks: (Array.isArray(tasks) ? tasks : []).map((k: any, i: number) => ({
      description: k.description,
      complete: k.complete ?? false,
      owner_ids: k.owner_ids ?? [],
      ...(k.external_id !== undefined ? { external_id: k.external_id } : {}),
      position: i + 1,
    })),
  };
}
