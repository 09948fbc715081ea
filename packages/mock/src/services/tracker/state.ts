import { randomBytes, randomUUID } from 'node:crypto';
import type { MockServiceOptions } from '../../service.js';
import type { MockState } from '../../store.js';
import type { TrackerState } from './common.js';
import type { CustomFieldValue, KeyResult, Member, ObservedValue } from './records.js';
import { COLLECTIONS } from './collections.js';

/** Story workflow states (ids and types); a story's phase for stats is its state's type. */
export const STORY_WORKFLOW_ID = 500000000;
export const STORY_STATES = [
  { id: 500000001, name: 'Backlog', type: 'backlog' },
  { id: 500000002, name: 'To Do', type: 'unstarted' },
  { id: 500000003, name: 'In Progress', type: 'started' },
  { id: 500000004, name: 'Done', type: 'done' },
] as const;
export const DEFAULT_STORY_STATE = 500000002;
/** The verbs of each story state (what moving a story there means), as the real workflow states carry. */
export const STORY_STATE_VERBS: Readonly<Record<number, string | null>> = Object.freeze(
  Object.assign(Object.create(null) as Record<number, string | null>, {
    500000001: null,
    500000002: null,
    500000003: 'start',
    500000004: 'finish',
  }),
);

export const EPIC_WORKFLOW_ID = 500000010;
/** Epic workflow states; the deprecated `state` names map onto them. */
export const EPIC_STATES = [
  { id: 500000011, name: 'To Do', type: 'unstarted', state: 'to do', color: '#e6e6e6' },
  { id: 500000012, name: 'In Progress', type: 'started', state: 'in progress', color: '#3e8ed0' },
  { id: 500000013, name: 'Done', type: 'done', state: 'done', color: '#48c774' },
] as const;

/** Fills in the tracker's slice: a new workspace, or the collections an older state lacks. */
export function initTracker(state: MockState, options: MockServiceOptions): boolean {
  let changed = false;
  if (!state.tracker) {
    state.tracker = { token: options.tracker?.token ?? `trk_${randomBytes(18).toString('base64url')}`, seq: 0, workspaceId: randomUUID(), labels: [] };
    changed = true;
  }
  const t = state.tracker as TrackerState;
  for (const c of COLLECTIONS) {
    if (!Array.isArray(t[c])) {
      t[c] = [];
      changed = true;
    }
  }
  if (!t.features) {
    const f = (options.tracker?.features ?? {}) as Record<string, boolean>;
    t.features = { documents: f.documents ?? true, story_templates: f.story_templates ?? true, iterations: f.iterations ?? true };
    changed = true;
  }
  // the plan's entitlements: options given at start (mock serve --tracker-max-groups …) win over a stored state's
  const e = (options.tracker?.entitlements ?? {}) as Record<string, number | undefined>;
  const wanted = { groups: e.groups ?? t.entitlements?.groups ?? 100, objectives: e.objectives ?? t.entitlements?.objectives ?? 1000 };
  if (!t.entitlements || t.entitlements.groups !== wanted.groups || t.entitlements.objectives !== wanted.objectives) {
    t.entitlements = wanted;
    changed = true;
  }
  if (!t.ownerId) {
    seed(t);
    changed = true;
  }
  return changed;
}

/** The records a workspace starts with: members, custom fields, repositories and one objective's key results. */
function seed(t: TrackerState): void {
  const at = '2026-01-01T00:00:00.000Z';
  const member = (name: string, mention: string, role: string, disabled: boolean): Member => {
    const id = randomUUID();
    return {
      id,
      created_at: at,
      updated_at: at,
      disabled,
      entity_type: 'member',
      group_ids: [],
      role,
      state: disabled ? 'disabled' : 'full',
      profile: {
        id,
        name,
        mention_name: mention,
        email_address: `${mention}@example.com`,
        avatar_hash: null,
        deactivated: disabled,
        is_owner: role === 'owner',
        two_factor_auth_activated: false,
        display_icon: null,
        entity_type: 'profile',
      },
    };
  };
  const owner = member('Workspace Owner', 'owner', 'owner', false);
  t.ownerId = owner.id;
  t.members.push(owner, member('Ada Lovelace', 'ada', 'member', false), member('Former Colleague', 'former', 'member', true));
  const value = (v: string, color: string, position: number): CustomFieldValue => ({
    id: randomUUID(),
    value: v,
    color_key: color,
    position,
    enabled: true,
    entity_type: 'custom-field-enum-value',
  });
  t.customFields.push(
    {
      id: randomUUID(),
      name: 'Priority',
      description: 'How urgent it is',
      canonical_name: 'priority',
      enabled: true,
      entity_type: 'custom-field',
      field_type: 'enum',
      icon_set_identifier: 'priority',
      position: 1,
      created_at: at,
      updated_at: at,
      values: [value('Highest', 'red', 1), value('High', 'orange', 2), value('Medium', 'yellow', 3), value('Low', 'gray', 4)],
    },
    {
      id: randomUUID(),
      name: 'Severity',
      description: 'How bad it is',
      canonical_name: 'severity',
      enabled: false,
      entity_type: 'custom-field',
      field_type: 'enum',
      icon_set_identifier: 'severity',
      position: 2,
      created_at: at,
      updated_at: at,
      values: [value('Critical', 'red', 1), value('Minor', 'blue', 2)],
    },
  );
  t.repositories.push(
    {
      id: 900000001,
      name: 'api',
      full_name: 'example/api',
      external_id: '1001',
      type: 'github',
      url: 'https://github.com/example/api',
      entity_type: 'repository',
      created_at: at,
      updated_at: at,
    },
    {
      id: 900000002,
      name: 'web',
      full_name: 'example/web',
      external_id: '1002',
      type: 'github',
      url: 'https://github.com/example/web',
      entity_type: 'repository',
      created_at: at,
      updated_at: at,
    },
  );
  const kr = (name: string, type: KeyResult['type'], target: ObservedValue, observed: ObservedValue, objective_id: number): KeyResult => ({
    id: randomUUID(),
    name,
    objective_id,
    progress: 0,
    type,
    initial_observed_value: { ...observed },
    current_observed_value: { ...observed },
    current_target_value: target,
    entity_type: 'key-result',
  });
  // the seeded objective owns both key results (its key_result_ids list them; key-results list --objective finds them)
  // a fixed id outside the sequence (like the seeded workflow and repositories): ids of what a user makes stay 1, 2, …
  const objectiveId = 700000001;
  t.objectives.push({
    id: objectiveId,
    entity_type: 'objective',
    app_url: `https://app.tracker.example/workspace/objective/${objectiveId}`,
    created_at: at,
    updated_at: at,
    name: 'Grow adoption',
    description: 'More teams use the product every week',
    archived: false,
    state: 'in progress',
    category_ids: [],
    started_at: at,
    completed_at: null,
    started_at_override: null,
    completed_at_override: null,
    position: 1,
  });
  t.keyResults.push(
    kr('Ship the new onboarding', 'boolean', { boolean_value: true }, { boolean_value: false }, objectiveId),
    kr('Weekly active teams', 'numeric', { numeric_value: '500' }, { numeric_value: '120' }, objectiveId),
  );
}
