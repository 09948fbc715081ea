import { customFields } from '@opsctl/shared/tracker/resources/custom-fields.js';
import { entityTemplates } from '@opsctl/shared/tracker/resources/entity-templates.js';
import { members } from '@opsctl/shared/tracker/resources/members.js';
import { repositories } from '@opsctl/shared/tracker/resources/repositories.js';
import { webhooks } from '@opsctl/shared/tracker/resources/webhooks.js';
import { MockError, reply } from '../../http.js';
import type { Route, ServiceContext } from '../../service.js';
import { API, assertFeature, assign, boolQuery, find, move, newGlobalId, tracker, unprocessable, type TrackerState } from './common.js';
import type { CustomFieldBody, CustomFieldValueParam, EntityTemplateBody, WebhookBody } from './bodies.js';
import { crudRoutes } from './crud.js';
import type { CustomField, CustomFieldValue, Member } from './records.js';
import { presentContents, storeContents } from './templates.js';
import { clone } from '../../tx.js';

/**
 * The custom-field update rules: `values` in the order given is the sort order; an existing value left
 * out is deleted; an item without `id` creates a value. An id that is not one of the field's values, or
 * two values with the same text, conflict with the stored field: 409 DataConflictError.
 */
function updateValues(field: CustomField, items: readonly CustomFieldValueParam[]): void {
  const seen = new Set<string>();
  const next = items.map((item, i) => {
    let v: CustomFieldValue | undefined;
    if (item.id !== undefined) {
      v = field.values.find((x) => x.id === item.id);
      if (!v) throw new MockError(409, 'DataConflictError', `value ${item.id} is not a value of custom field ${field.id}; reload the field and try again`);
    } else {
      // {} is valid against UpdateCustomFieldEnumValue (every field optional): a value it cannot make is 422, not a schema mismatch
      if (item.value === undefined) throw unprocessable(`values[${i}]: a new value needs its text (value), or give the id of an existing one`, `values[${i}]`);
      v = { id: newGlobalId(), value: item.value, color_key: null, enabled: true, entity_type: 'custom-field-enum-value', position: i + 1 };
    }
    const out: CustomFieldValue = { ...v, position: i + 1 };
    assign(out, item, ['value', 'color_key', 'enabled']);
    const key = String(out.value).toLowerCase();
    if (seen.has(key)) throw new MockError(409, 'DataConflictError', `custom field ${field.id} would have the value "${out.value}" twice`);
    seen.add(key);
    return out;
  });
  field.values = next;
}

function presentMember(m: Member): Member {
  return clone(m);
}

export function miscRoutes(ctx: ServiceContext): Route[] {
  const { store } = ctx;
  const fields = crudRoutes<'customFields', CustomFieldBody>(ctx, {
    spec: customFields,
    coll: 'customFields',
    entityType: 'custom-field',
    change(f, body, t) {
      assign(f, body, ['name', 'description', 'enabled', 'icon_set_identifier']);
      if (body.values !== undefined) updateValues(f, body.values);
      move(t.customFields, f, body, 'custom field');
    },
    present: (_t, f) => clone(f),
  });
  const templates = crudRoutes<'entityTemplates', EntityTemplateBody>(ctx, {
    spec: entityTemplates,
    coll: 'entityTemplates',
    entityType: 'entity-template',
    make: (body, t: TrackerState, at) => {
      assertFeature(t, 'story_templates');
      return { name: body.name, author_id: body.author_id ?? t.ownerId, last_used_at: at, story_contents: storeContents(t, { ...body.story_contents }, at) };
    },
    change(tpl, body, t, at) {
      assertFeature(t, 'story_templates');
      if (body.name !== undefined) tpl.name = body.name;
      if (body.story_contents !== undefined) tpl.story_contents = storeContents(t, { ...tpl.story_contents, ...body.story_contents }, at);
    },
    present: (t, tpl) => {
      const { app_url: _a, story_contents, ...rest } = tpl;
      return { ...clone(rest), story_contents: presentContents(t, story_contents) };
    },
  });
  const people = crudRoutes<'members', Record<string, never>>(ctx, {
    spec: members,
    coll: 'members',
    entityType: 'member',
    filter(req, items) {
      const disabled = boolQuery(req, 'disabled');
      return disabled === undefined ? items : items.filter((m) => m.disabled === disabled);
    },
    present: (_t, m) => presentMember(m),
  });
  people.push({
    method: 'GET',
    path: `${API}/member`,
    handler: async () =>
      reply.ok(
        await store.read((s) => {
          const t = tracker(s);
          const me = find(t.members, t.ownerId, members);
          return {
            id: me.id,
            name: me.profile.name,
            mention_name: me.profile.mention_name,
            role: me.role,
            is_owner: true,
            organization2: { id: t.workspaceId },
            workspace2: {
              id: t.workspaceId,
              name: 'Example Workspace',
              url_slug: 'example',
              utc_offset: '+00:00',
              created_at: '2026-01-01T00:00:00.000Z',
              default_workflow_id: 500000000,
              estimate_scale: [0, 1, 2, 4, 8],
            },
          };
        }),
      ),
  });
  const repos = crudRoutes<'repositories', Record<string, never>>(ctx, { spec: repositories, coll: 'repositories', entityType: 'repository' });
  const hooks = crudRoutes<'webhooks', WebhookBody>(ctx, {
    spec: webhooks,
    coll: 'webhooks',
    entityType: 'webhook-integration',
    createdNoContent: true,
    make: (body) => ({ webhook_url: body.webhook_url, secret: body.secret ?? null }),
    present: (_t, w) => {
      const { secret, app_url: _a, ...rest } = w;
      return { ...rest, has_secret: Boolean(secret) };
    },
  });
  return [...fields, ...templates, ...people, ...repos, ...hooks];
}
