import { groups } from '@opsctl/shared/tracker/resources/groups.js';
import { MockError, reply } from '../../http.js';
import type { Route, ServiceContext } from '../../service.js';
import { API, APP_URL, assign, find, intQuery, tracker, uuidParam, type TrackerState } from './common.js';
import type { GroupBody } from './bodies.js';
import { crudRoutes } from './crud.js';
import type { Group } from './records.js';
import { phase } from './stats.js';
import { presentStory } from './stories.js';
import { STORY_WORKFLOW_ID } from './state.js';

function entitlementExhausted(t: TrackerState): MockError {
  return new MockError(
    403,
    'UnusableEntitlementError',
    `the workspace's group entitlement (${t.entitlements.groups} active groups) is used up; archive a group or upgrade the plan`,
    { entitlement_tag: 'groups' },
  );
}

const active = (t: TrackerState) => t.groups.filter((g) => !g.archived).length;

function assertUniqueMention(t: TrackerState, mention: string, exceptId?: string): void {
  const clash = t.groups.find((g) => g.id !== exceptId && g.mention_name.toLowerCase() === mention.toLowerCase());
  if (clash)
    throw new MockError(422, 'unprocessable', `mention_name "${mention}" is already used by group ${clash.id}`, {
      errors: { mention_name: 'is already used' },
    });
}

function presentGroup(t: TrackerState, g: Group) {
  const stories = t.stories.filter((s) => s.group_id === g.id);
  const { display_icon_id, ...rest } = g;
  return {
    ...rest,
    display_icon: display_icon_id
      ? { id: display_icon_id, url: `${APP_URL}/icons/${display_icon_id}`, entity_type: 'icon', created_at: g.created_at, updated_at: g.updated_at }
      : null,
    num_stories: stories.length,
    num_stories_started: stories.filter((s) => phase(s) === 'started').length,
    num_stories_backlog: stories.filter((s) => phase(s) === 'backlog').length,
    num_epics_started: t.epics.filter((e) => e.group_ids.includes(g.id) && e.started_at).length,
  };
}

export function groupRoutes(ctx: ServiceContext): Route[] {
  const routes = crudRoutes<'groups', GroupBody>(ctx, {
    spec: groups,
    coll: 'groups',
    entityType: 'group',
    make(body, t) {
      if (active(t) >= t.entitlements.groups) throw entitlementExhausted(t);
      assertUniqueMention(t, body.mention_name);
      return {
        name: body.name,
        mention_name: body.mention_name,
        description: body.description ?? '',
        archived: false,
        color: body.color ?? null,
        color_key: body.color_key ?? null,
        display_icon_id: body.display_icon_id ?? null,
        member_ids: body.member_ids ?? [],
        workflow_ids: body.workflow_ids ?? [STORY_WORKFLOW_ID],
        default_workflow_id: STORY_WORKFLOW_ID,
      };
    },
    change(g, body, t) {
      if (body.archived === false && g.archived && active(t) >= t.entitlements.groups) throw entitlementExhausted(t);
      if (body.mention_name !== undefined) assertUniqueMention(t, body.mention_name, g.id);
      assign(g, body, ['name', 'mention_name', 'description', 'color', 'color_key', 'display_icon_id', 'member_ids', 'workflow_ids', 'default_workflow_id']);
      if (body.archived !== undefined) g.archived = body.archived ?? false;
    },
    present: (t, g) => presentGroup(t, g),
  });
  routes.push({
    method: 'GET',
    path: `${API}/groups/:id/stories`,
    handler: async (req) => {
      const id = uuidParam(req, 'id');
      const limit = intQuery(req, 'limit', 1000, 1, 1000);
      const offset = intQuery(req, 'offset', 0, 0, Number.MAX_SAFE_INTEGER);
      return reply.ok(
        await ctx.store.read((s) => {
          const t = tracker(s);
          find(t.groups, id, groups);
          return t.stories
            .filter((st) => st.group_id === id)
            .slice(offset, offset + limit)
            .map((st) => presentStory(t, st));
        }),
      );
    },
  });
  return routes;
}
