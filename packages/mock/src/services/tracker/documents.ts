import { documents as spec } from '@opsctl/shared/tracker/resources/documents.js';
import { epics } from '@opsctl/shared/tracker/resources/epics.js';
import { MockError, reply, type MockRequest } from '../../http.js';
import type { Route, ServiceContext } from '../../service.js';
import { API, find, intParam, intQuery, boolQuery, tracker, uuidParam, type TrackerState } from './common.js';
import type { DocumentBody } from './bodies.js';
import { crudRoutes } from './crud.js';
import type { TrackerDocument } from './records.js';
import { presentEpic } from './epics.js';

const slim = (d: Pick<TrackerDocument, 'id' | 'title' | 'app_url'>) => ({ id: d.id, title: d.title, app_url: d.app_url });
const full = (d: TrackerDocument) => ({
  id: d.id,
  title: d.title,
  content_markdown: d.content,
  app_url: d.app_url,
  archived: d.archived ?? false,
  created_at: d.created_at,
  updated_at: d.updated_at,
});

/** Documents (403 DisabledFeatureError while the feature is off), their links to epics, and the title search. */
export function documentRoutes(ctx: ServiceContext): Route[] {
  const { store } = ctx;
  const docs = crudRoutes<'documents', DocumentBody>(ctx, {
    spec,
    coll: 'documents',
    entityType: 'doc',
    make: (body, t) => ({ title: body.title, content: body.content, archived: false, epic_ids: [], created_by: t.ownerId }),
    change(d, body) {
      if (body.title !== undefined) d.title = body.title;
      if (body.content !== undefined) d.content = body.content;
    },
    present: (_t, d, list) => (list ? slim(d) : full(d)),
  });
  // create answers DocSlim, get and update the full Doc (as the reference types them)
  const create = docs.find((r) => r.method === 'POST')!;
  const inner = create.handler;
  create.handler = async (req) => {
    const r = await inner(req);
    return { ...r, json: slim(r.json as ReturnType<typeof full>) };
  };
  const docOf = (t: TrackerState, req: MockRequest): TrackerDocument => find(t.documents, uuidParam(req, 'id'), spec);
  const routes: Route[] = [
    ...docs,
    {
      method: 'GET',
      path: `${API}/documents/:id/epics`,
      handler: async (req) =>
        reply.ok(
          await store.read((s) => {
            const t = tracker(s);
            const d = docOf(t, req);
            return t.epics.filter((e) => d.epic_ids.includes(e.id)).map((e) => presentEpic(t, e, true));
          }),
        ),
    },
    {
      method: 'PUT',
      path: `${API}/documents/:id/epics/:eid`,
      handler: async (req) => {
        const eid = intParam(req, 'eid');
        await store.write((s) => {
          const t = tracker(s);
          const d = docOf(t, req);
          find(t.epics, eid, epics);
          if (!d.epic_ids.includes(eid)) d.epic_ids.push(eid);
        });
        return reply.noContent();
      },
    },
    {
      method: 'DELETE',
      path: `${API}/documents/:id/epics/:eid`,
      handler: async (req) => {
        const eid = intParam(req, 'eid');
        await store.write((s) => {
          const d = docOf(tracker(s), req);
          if (!d.epic_ids.includes(eid)) throw new MockError(404, 'not_found', `document ${d.id} is not linked to epic ${eid}`);
          d.epic_ids = d.epic_ids.filter((x) => x !== eid);
        });
        return reply.noContent();
      },
    },
    {
      method: 'GET',
      path: `${API}/epics/:id/documents`,
      handler: async (req) => {
        const id = intParam(req, 'id');
        return reply.ok(
          await store.read((s) => {
            const t = tracker(s);
            find(t.epics, id, epics);
            return t.documents.filter((d) => (d.epic_ids ?? []).includes(id)).map(slim);
          }),
        );
      },
    },
    {
      method: 'GET',
      path: `${API}/search/documents`,
      handler: async (req) => {
        const title = req.query.get('title');
        if (!title) throw new MockError(400, 'schema_mismatch', 'schema mismatch: query parameter title is required', { errors: { title: 'is required' } });
        if (title.length > 256) throw new MockError(413, 'string_too_long', 'a string exceeded its length limit: title must be at most 256 characters');
        const size = intQuery(req, 'page_size', 25, 1, 250);
        const archived = boolQuery(req, 'archived');
        const mine = boolQuery(req, 'created_by_me');
        const offset = intQuery(req, 'offset', 0, 0, 1000);
        const terms = title.toLowerCase().split(/\s+/).filter(Boolean);
        return reply.ok(
          await store.read((s) => {
            const t = tracker(s);
            const all = t.documents.filter(
              (d) =>
                terms.every((w) => (d.title ?? '').toLowerCase().includes(w)) &&
                (archived === undefined || Boolean(d.archived) === archived) &&
                (mine === undefined || (d.created_by === t.ownerId) === mine),
            );
            const data = all.slice(offset, offset + size).map(slim);
            const end = offset + size;
            const next =
              end < Math.min(all.length, 1000)
                ? `${API}/search/documents?${new URLSearchParams({ title, page_size: String(size), offset: String(end) }).toString()}`
                : null;
            return { data, next, total: all.length };
          }),
        );
      },
    },
  ];
  // every documents route answers 403 DisabledFeatureError while the feature is off
  for (const r of routes) {
    if (r.path.startsWith(`${API}/epics/`)) continue;
    const handler = r.handler;
    r.handler = async (req) => {
      const on = await store.read((s) => tracker(s).features.documents);
      if (!on)
        throw new MockError(403, 'DisabledFeatureError', 'documents are turned off for this workspace; an admin can turn them on in the workspace settings', {
          feature_tag: 'documents',
        });
      return handler(req);
    };
  }
  return routes;
}
