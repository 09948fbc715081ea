import { epics } from '@opsctl/shared/tracker/resources/epics.js';
import { health as healthSpec } from '@opsctl/shared/tracker/resources/health.js';
import { reply, type MockRequest } from '../../http.js';
import type { Route, ServiceContext } from '../../service.js';
import { API, APP_URL, find, intParam, newGlobalId, nextId, nowIso, tracker, uuidParam, validate, type TrackerState } from './common.js';
import type { CommentBody, HealthBody, HealthSetBody, TextBody } from './bodies.js';
import type { EpicComment, Health } from './records.js';
import { currentHealth } from './stats.js';

/** An epic comment as the API shows it: its replies nested, without the store's own links. */
export interface CommentView extends Omit<EpicComment, 'epic_id' | 'parent_id'> {
  comments: CommentView[];
}

const commentSpec = { singular: 'comment' };

/** The comments of an epic under `parentId` (null: top level), each with its replies nested. */
export function commentTree(t: TrackerState, epicId: number, parentId: number | null): CommentView[] {
  return t.epicComments.filter((c) => c.epic_id === epicId && c.parent_id === parentId).map((c) => presentComment(t, c));
}

function presentComment(t: TrackerState, c: EpicComment): CommentView {
  const { epic_id: _e, parent_id: _p, ...rest } = c;
  return { ...rest, comments: commentTree(t, c.epic_id, c.id) };
}

function findComment(t: TrackerState, epicId: number, id: number): EpicComment {
  find(t.epics, epicId, epics);
  return find(
    t.epicComments.filter((c) => c.epic_id === epicId),
    id,
    commentSpec,
  );
}

/** An epic's threaded comments and its health. */
export function epicCommentRoutes(ctx: ServiceContext): Route[] {
  return [...commentRoutes(ctx), ...healthRoutes(ctx)];
}

/** A comment on an epic, or (with `parentId`) a reply to one of its comments. */
async function addComment(ctx: ServiceContext, epicId: number, parentId: number | null, req: MockRequest): Promise<CommentView> {
  const body = await validate<CommentBody>(req);
  return ctx.store.write((s) => {
    const t = tracker(s);
    if (parentId === null) find(t.epics, epicId, epics);
    else findComment(t, epicId, parentId);
    const at = nowIso(ctx.now());
    const id = nextId(t);
    const c = {
      id,
      epic_id: epicId,
      parent_id: parentId,
      app_url: `${APP_URL}/epic/${epicId}#comment-${id}`,
      author_id: body.author_id ?? t.ownerId,
      text: body.text,
      external_id: body.external_id ?? null,
      deleted: false,
      entity_type: 'threaded-comment',
      group_mention_ids: [],
      member_mention_ids: [],
      mention_ids: [],
      created_at: body.created_at ?? at,
      updated_at: body.updated_at ?? at,
    };
    t.epicComments.push(c);
    return presentComment(t, c);
  });
}

/** The comments of an epic: list (as a tree), add, reply, get, edit, delete with its replies. */
function commentRoutes(ctx: ServiceContext): Route[] {
  const { store } = ctx;
  return [
    {
      method: 'GET',
      path: `${API}/epics/:id/comments`,
      handler: async (req) => {
        const id = intParam(req, 'id');
        return reply.ok(
          await store.read((s) => {
            const t = tracker(s);
            find(t.epics, id, epics);
            return commentTree(t, id, null);
          }),
        );
      },
    },
    { method: 'POST', path: `${API}/epics/:id/comments`, handler: async (req) => reply.created(await addComment(ctx, intParam(req, 'id'), null, req)) },
    {
      method: 'GET',
      path: `${API}/epics/:id/comments/:cid`,
      handler: async (req) => {
        const [id, cid] = [intParam(req, 'id'), intParam(req, 'cid')];
        return reply.ok(await store.read((s) => presentComment(tracker(s), findComment(tracker(s), id, cid))));
      },
    },
    {
      method: 'POST',
      path: `${API}/epics/:id/comments/:cid`,
      handler: async (req) => reply.created(await addComment(ctx, intParam(req, 'id'), intParam(req, 'cid'), req)),
    },
    {
      method: 'PUT',
      path: `${API}/epics/:id/comments/:cid`,
      handler: async (req) => {
        const [id, cid] = [intParam(req, 'id'), intParam(req, 'cid')];
        const body = await validate<TextBody>(req);
        return reply.ok(
          await store.write((s) => {
            const c = findComment(tracker(s), id, cid);
            c.text = body.text;
            c.updated_at = nowIso(ctx.now());
            return presentComment(tracker(s), c);
          }),
        );
      },
    },
    {
      method: 'DELETE',
      path: `${API}/epics/:id/comments/:cid`,
      handler: async (req) => {
        const [id, cid] = [intParam(req, 'id'), intParam(req, 'cid')];
        await store.write((s) => {
          const t = tracker(s);
          findComment(t, id, cid);
          const gone = new Set<number>([cid]);
          let grew = true;
          while (grew) {
            grew = false;
            for (const c of t.epicComments) {
              if (c.parent_id !== null && gone.has(c.parent_id) && !gone.has(c.id)) {
                gone.add(c.id);
                grew = true;
              }
            }
          }
          t.epicComments = t.epicComments.filter((c) => !gone.has(c.id));
        });
        return reply.noContent();
      },
    },
  ];
}

/** An epic's health: the current one, a new one, the history; and editing one by its id. */
function healthRoutes(ctx: ServiceContext): Route[] {
  const { store } = ctx;
  return [
    {
      method: 'GET',
      path: `${API}/epics/:id/health`,
      handler: async (req) => {
        const id = intParam(req, 'id');
        return reply.ok(
          await store.read((s) => {
            find(tracker(s).epics, id, epics);
            return currentHealth(tracker(s), id);
          }),
        );
      },
    },
    {
      method: 'POST',
      path: `${API}/epics/:id/health`,
      handler: async (req) => {
        const id = intParam(req, 'id');
        const body = await validate<HealthSetBody>(req);
        return reply.created(
          await store.write((s) => {
            const t = tracker(s);
            find(t.epics, id, epics);
            const at = nowIso(ctx.now());
            const h: Health = {
              id: newGlobalId(),
              author_id: t.ownerId,
              epic_id: id,
              objective_id: null,
              status: body.status,
              text: body.text ?? null,
              entity_type: 'health',
              created_at: at,
              updated_at: at,
            };
            t.health.push(h);
            return { ...h };
          }),
        );
      },
    },
    {
      method: 'GET',
      path: `${API}/epics/:id/health-history`,
      handler: async (req) => {
        const id = intParam(req, 'id');
        return reply.ok(
          await store.read((s) => {
            const t = tracker(s);
            find(t.epics, id, epics);
            return t.health
              .filter((h) => h.epic_id === id)
              .reverse()
              .map((h) => ({ ...h }));
          }),
        );
      },
    },
    {
      method: 'PUT',
      path: `${API}/health/:id`,
      handler: async (req) => {
        const id = uuidParam(req, 'id');
        const body = await validate<HealthBody>(req);
        return reply.ok(
          await store.write((s) => {
            const h = find(tracker(s).health, id, healthSpec);
            if (body.status !== undefined) h.status = body.status;
            if (body.text !== undefined) h.text = body.text;
            h.updated_at = nowIso(ctx.now());
            return { ...h };
          }),
        );
      },
    },
  ];
}
