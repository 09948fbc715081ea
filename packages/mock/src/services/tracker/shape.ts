import type { MockReply } from '../../http.js';

/**
 * The last step of every tracker answer: records on the wire look the way the reference contract types
 * them, whatever the store keeps. One walk over the reply, building new objects (the store's own records
 * are never touched), by each object's `entity_type`:
 *  - `global_id` on the kinds that carry one (derived from `entity_type` and `id`);
 *  - fields the contract types as non-nullable are omitted while they have no value, instead of `null`
 *    (an epic's placeholder health has no author, text or times; a story not yet started has no cycle time);
 *  - the store's bookkeeping that is no part of the contract is dropped.
 * Lookups are Map/Set only.
 */
const GLOBAL_ID = new Set([
  'category',
  'epic',
  'epic-state',
  'group',
  'iteration',
  'label',
  'member',
  'milestone',
  'objective',
  'project',
  'story',
  'task',
  'workflow-state',
]);

const OMIT_WHEN_NULL = new Map<string, readonly string[]>([
  ['health', ['author_id', 'epic_id', 'objective_id', 'text', 'created_at', 'updated_at']],
  ['story', ['cycle_time', 'lead_time', 'parent_story_id']],
  ['project', ['start_time']],
  ['history', ['member_id', 'external_id']],
]);

const DROP = new Map<string, readonly string[]>([
  ['category', ['app_url']],
  ['linked-file', ['app_url']],
  ['epic', ['converted_from_story_id']],
  ['key-result', ['entity_type']],
]);

const ALWAYS = new Map<string, Readonly<Record<string, unknown>>>([['member', { created_without_invite: false }]]);

const NONE: readonly string[] = [];

function walk(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(walk);
  if (!value || typeof value !== 'object') return value;
  const src = value as Record<string, unknown>;
  const type = typeof src.entity_type === 'string' ? src.entity_type : '';
  const omit = OMIT_WHEN_NULL.get(type) ?? NONE;
  const drop = DROP.get(type) ?? NONE;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(src)) {
    if (drop.includes(k) || (v === null && omit.includes(k))) continue;
    out[k] = walk(v);
  }
  // the store's ids are integers or uuids
  const id = src.id;
  if (GLOBAL_ID.has(type) && (typeof id === 'number' || typeof id === 'string') && out.global_id === undefined) out.global_id = `v2:${type}:${id}`;
  const always = ALWAYS.get(type);
  if (always) for (const [k, v] of Object.entries(always)) if (out[k] === undefined) out[k] = v;
  return out;
}

export function shapeReply(r: MockReply): MockReply {
  return r.json === undefined ? r : { ...r, json: walk(r.json) };
}
