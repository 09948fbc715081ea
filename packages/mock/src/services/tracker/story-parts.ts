import { stories } from '@opsctl/shared/tracker/resources/stories.js';
import { storyLinks } from '@opsctl/shared/tracker/resources/story-links.js';
import { MockError, reply } from '../../http.js';
import type { Route, ServiceContext } from '../../service.js';
import { API, find, intParam, move, nextId, nowIso, tracker, unprocessable, validate, type TrackerState } from './common.js';
import type { EmojiBody, StoryCommentBody, StoryLinkBody, TaskAddBody, TaskUpdateBody, TextBody } from './bodies.js';
import { crudRoutes } from './crud.js';
import type { Story, StoryComment, Task } from './records.js';
import { addComment, addLink, presentLink, presentStoryComment } from './stories.js';

const commentSpec = { singular: 'comment' };
const taskSpec = { singular: 'task' };
/** Distinct emoji one comment may carry (a bound on what a client can make the mock keep). */
const MAX_REACTIONS = 64;

function storyOf(t: TrackerState, id: number): Story {
  return find(t.stories, id, stories);
}

function commentOf(t: TrackerState, storyId: number, id: number): StoryComment {
  storyOf(t, storyId);
  return find(
    t.storyComments.filter((c) => c.story_id === storyId),
    id,
    commentSpec,
  );
}

function taskOf(t: TrackerState, storyId: number, id: number): Task {
  storyOf(t, storyId);
  return find(
    t.tasks.filter((k) => k.story_id === storyId),
    id,
    taskSpec,
  );
}

/** Story comments (replies by `parent_id`, deleting a comment deletes its replies), reactions, tasks and story links. */
export function storyPartRoutes(ctx: ServiceContext): Route[] {
  return [...linkRoutes(ctx), ...commentRoutes(ctx), ...reactionRoutes(ctx), ...taskRoutes(ctx)];
}

/** Marks a story as changed (a comment or task of it changed). */
function touch(t: TrackerState, storyId: number, at: string): void {
  const s = t.stories.find((x) => x.id === storyId);
  if (s) s.updated_at = at;
}

/** Story links: get, update and delete by the resource table, create with its checks. */
function linkRoutes(ctx: ServiceContext): Route[] {
  const { store } = ctx;
  const links = crudRoutes<'storyLinks', StoryLinkBody>(ctx, {
    spec: storyLinks,
    coll: 'storyLinks',
    entityType: 'story-link',
    routes: ['get', 'update', 'delete'],
    change(l, b, t) {
      const next = { verb: b.verb ?? l.verb, subject_id: b.subject_id ?? l.subject_id, object_id: b.object_id ?? l.object_id };
      for (const f of ['subject_id', 'object_id'] as const)
        if (!t.stories.some((s) => s.id === next[f])) throw unprocessable(`${f}: story ${next[f]} does not exist`, f);
      if (next.subject_id === next.object_id) throw unprocessable('object_id: a story cannot be linked to itself', 'object_id');
      Object.assign(l, next);
    },
    present: (t, l) => presentLink(t, l),
  });
  return [
    ...links,
    {
      method: 'POST',
      path: `${API}/story-links`,
      handler: async (req) => {
        const b = await validate<StoryLinkBody>(req);
        return reply.created(
          await store.write((s) => {
            const t = tracker(s);
            return presentLink(t, addLink(t, b, nowIso(ctx.now())));
          }),
        );
      },
    },
  ];
}

/** A story's comments: list, add (or reply), get, edit, delete with its replies. */
function commentRoutes(ctx: ServiceContext): Route[] {
  const { store } = ctx;
  return [
    {
      method: 'GET',
      path: `${API}/stories/:id/comments`,
      handler: async (req) => {
        const id = intParam(req, 'id');
        return reply.ok(
          await store.read((s) => {
            const t = tracker(s);
            storyOf(t, id);
            return t.storyComments.filter((c) => c.story_id === id).map(presentStoryComment);
          }),
        );
      },
    },
    {
      method: 'POST',
      path: `${API}/stories/:id/comments`,
      handler: async (req) => {
        const id = intParam(req, 'id');
        const b = await validate<StoryCommentBody>(req);
        return reply.created(
          await store.write((s) => {
            const t = tracker(s);
            storyOf(t, id);
            if (b.parent_id !== undefined && b.parent_id !== null && !t.storyComments.some((c) => c.story_id === id && c.id === b.parent_id)) {
              throw unprocessable(`parent_id: comment ${b.parent_id} is not a comment of story ${id}`, 'parent_id');
            }
            return presentStoryComment(addComment(t, id, b, nowIso(ctx.now())));
          }),
        );
      },
    },
    {
      method: 'GET',
      path: `${API}/stories/:id/comments/:cid`,
      handler: async (req) => {
        const [id, cid] = [intParam(req, 'id'), intParam(req, 'cid')];
        return reply.ok(await store.read((s) => presentStoryComment(commentOf(tracker(s), id, cid))));
      },
    },
    {
      method: 'PUT',
      path: `${API}/stories/:id/comments/:cid`,
      handler: async (req) => {
        const [id, cid] = [intParam(req, 'id'), intParam(req, 'cid')];
        const b = await validate<TextBody>(req);
        return reply.ok(
          await store.write((s) => {
            const c = commentOf(tracker(s), id, cid);
            c.text = b.text;
            c.updated_at = nowIso(ctx.now());
            return presentStoryComment(c);
          }),
        );
      },
    },
    {
      // the mock has no chat: the thread has nothing to unlink, and the comment is answered as it is (201, as the document says)
      method: 'POST',
      path: `${API}/stories/:id/comments/:cid/unlink-from-slack`,
      handler: async (req) => {
        const [id, cid] = [intParam(req, 'id'), intParam(req, 'cid')];
        await validate(req);
        return reply.created(await store.read((s) => presentStoryComment(commentOf(tracker(s), id, cid))));
      },
    },
    {
      method: 'DELETE',
      path: `${API}/stories/:id/comments/:cid`,
      handler: async (req) => {
        const [id, cid] = [intParam(req, 'id'), intParam(req, 'cid')];
        await store.write((s) => {
          const t = tracker(s);
          commentOf(t, id, cid);
          const gone = new Set<number>([cid]);
          for (let grew = true; grew;) {
            grew = false;
            for (const c of t.storyComments) {
              if (typeof c.parent_id === 'number' && gone.has(c.parent_id) && !gone.has(c.id)) {
                gone.add(c.id);
                grew = true;
              }
            }
          }
          t.storyComments = t.storyComments.filter((c) => !gone.has(c.id));
        });
        return reply.noContent();
      },
    },
  ];
}

/** Emoji reactions on a story comment, one per person and emoji. */
function reactionRoutes(ctx: ServiceContext): Route[] {
  const { store } = ctx;
  return [
    {
      method: 'POST',
      path: `${API}/stories/:id/comments/:cid/reactions`,
      handler: async (req) => {
        const [id, cid] = [intParam(req, 'id'), intParam(req, 'cid')];
        const b = await validate<EmojiBody>(req);
        return reply.created(
          await store.write((s) => {
            const t = tracker(s);
            const c = commentOf(t, id, cid);
            let r = c.reactions.find((x) => x.emoji === b.emoji);
            if (!r) {
              if (c.reactions.length >= MAX_REACTIONS) throw unprocessable(`emoji: a comment carries at most ${MAX_REACTIONS} different reactions`, 'emoji');
              r = { emoji: b.emoji, permission_ids: [] };
              c.reactions.push(r);
            }
            if (!r.permission_ids.includes(t.ownerId)) r.permission_ids.push(t.ownerId);
            return presentStoryComment(c).reactions;
          }),
        );
      },
    },
    {
      method: 'DELETE',
      path: `${API}/stories/:id/comments/:cid/reactions`,
      handler: async (req) => {
        const [id, cid] = [intParam(req, 'id'), intParam(req, 'cid')];
        const b = await validate<EmojiBody>(req);
        await store.write((s) => {
          const t = tracker(s);
          const c = commentOf(t, id, cid);
          const r = c.reactions.find((x) => x.emoji === b.emoji && x.permission_ids.includes(t.ownerId));
          if (!r) throw new MockError(404, 'not_found', `you have no ${b.emoji} reaction on comment ${cid}`);
          r.permission_ids = r.permission_ids.filter((p) => p !== t.ownerId);
          c.reactions = c.reactions.filter((x) => x.permission_ids.length > 0);
        });
        return reply.noContent();
      },
    },
  ];
}

/** A story's tasks: add, get, change (or move), delete. */
function taskRoutes(ctx: ServiceContext): Route[] {
  const { store } = ctx;
  return [
    {
      method: 'POST',
      path: `${API}/stories/:id/tasks`,
      handler: async (req) => {
        const id = intParam(req, 'id');
        const b = await validate<TaskAddBody>(req);
        return reply.created(
          await store.write((s) => {
            const t = tracker(s);
            storyOf(t, id);
            const at = nowIso(ctx.now());
            const mine = t.tasks.filter((k) => k.story_id === id);
            const task: Task = {
              id: nextId(t),
              story_id: id,
              description: b.description,
              complete: b.complete ?? false,
              completed_at: b.complete ? at : null,
              owner_ids: b.owner_ids ?? [],
              external_id: b.external_id ?? null,
              position: Math.max(0, ...mine.map((k) => k.position)) + 1,
              entity_type: 'task',
              mention_ids: [],
              member_mention_ids: [],
              group_mention_ids: [],
              created_at: b.created_at ?? at,
              updated_at: b.updated_at ?? b.created_at ?? at,
            };
            t.tasks.push(task);
            touch(t, id, at);
            return { ...task };
          }),
        );
      },
    },
    {
      method: 'GET',
      path: `${API}/stories/:id/tasks/:tid`,
      handler: async (req) => {
        const [id, tid] = [intParam(req, 'id'), intParam(req, 'tid')];
        return reply.ok(await store.read((s) => ({ ...taskOf(tracker(s), id, tid) })));
      },
    },
    {
      method: 'PUT',
      path: `${API}/stories/:id/tasks/:tid`,
      handler: async (req) => {
        const [id, tid] = [intParam(req, 'id'), intParam(req, 'tid')];
        const b = await validate<TaskUpdateBody>(req);
        return reply.ok(
          await store.write((s) => {
            const t = tracker(s);
            const task = taskOf(t, id, tid);
            const at = nowIso(ctx.now());
            if (b.description !== undefined) task.description = b.description;
            if (b.owner_ids !== undefined) task.owner_ids = b.owner_ids;
            if (b.complete !== undefined && b.complete !== task.complete) {
              task.complete = b.complete;
              task.completed_at = b.complete ? at : null;
            }
            move(
              t.tasks.filter((k) => k.story_id === id),
              task,
              b,
              'task',
            );
            task.updated_at = at;
            touch(t, id, at);
            return { ...task };
          }),
        );
      },
    },
    {
      method: 'DELETE',
      path: `${API}/stories/:id/tasks/:tid`,
      handler: async (req) => {
        const [id, tid] = [intParam(req, 'id'), intParam(req, 'tid')];
        await store.write((s) => {
          const t = tracker(s);
          const task = taskOf(t, id, tid);
          t.tasks = t.tasks.filter((k) => k !== task);
        });
        return reply.noContent();
      },
    },
  ];
}
