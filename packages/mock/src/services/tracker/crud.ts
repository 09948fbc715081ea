import { reply, type MockRequest } from '../../http.js';
import type { Route, ServiceContext } from '../../service.js';
import { API, APP_URL, find, intParam, newGlobalId, nextId, nowIso, tracker, uuidParam, validate, type ResourceRoutes, type TrackerState } from './common.js';

/** The collections of the tracker's state (the keys whose values are lists of records). */
export type Collection = { [K in keyof TrackerState]: TrackerState[K] extends unknown[] ? K : never }[keyof TrackerState];
/** The collections served by plain CRUD routes: records that carry an `updated_at`. */
export type CrudCollection = Exclude<Collection, 'storyHistory'>;
/** The record type of one collection. */
export type ItemOf<K extends Collection> = TrackerState[K][number];

/**
 * The routes of a plain resource (list, create, get, update, delete) over one collection of the store.
 * The hooks hold each resource's own rules; validation always comes from the shared resource table,
 * and `B` is the type of its body (bodies.ts; an update body is its `Partial`).
 */
export interface CrudDef<K extends CrudCollection, B extends object = Record<string, unknown>> {
  spec: ResourceRoutes;
  /** The state collection, e.g. `categories`. */
  coll: K;
  entityType: string;
  /** Path under /api/v3 (default: the spec's). */
  path?: string;
  routes?: ReadonlyArray<'list' | 'create' | 'get' | 'update' | 'delete'>;
  /** The new record's own fields (id, timestamps, entity_type and app_url are added). */
  make?(body: B, t: TrackerState, at: string, req: MockRequest): Partial<ItemOf<K>>;
  /** Applies an update body; default copies the body's keys. */
  change?(item: ItemOf<K>, body: Partial<B>, t: TrackerState, at: string): void;
  present?(t: TrackerState, item: ItemOf<K>, list: boolean, req?: MockRequest): unknown;
  filter?(req: MockRequest, items: Array<ItemOf<K>>): Array<ItemOf<K>>;
  beforeDelete?(t: TrackerState, item: ItemOf<K>): void;
  /** Runs inside the same transaction after a create or an update. */
  after?(t: TrackerState, item: ItemOf<K>): void;
  /** 201 with the record (default), or 204 without a body. */
  createdNoContent?: boolean;
}

export function crudRoutes<K extends CrudCollection, B extends object = Record<string, unknown>>(ctx: ServiceContext, def: CrudDef<K, B>): Route[] {
  type Item = ItemOf<K>;
  const { store } = ctx;
  const base = `${API}${def.path ?? def.spec.path}`;
  const which = def.routes ?? def.spec.verbs;
  const present = (t: TrackerState, item: Item, list: boolean, req?: MockRequest): unknown => (def.present ? def.present(t, item, list, req) : { ...item });
  const idOf = (req: MockRequest) => (def.spec.idType === 'uuid' ? uuidParam(req, 'id') : intParam(req, 'id'));
  // the list itself (initTracker makes every collection before a request is served)
  const coll = (t: TrackerState): Item[] => t[def.coll];
  const routes: Route[] = [];
  if (which.includes('list')) {
    routes.push({
      method: 'GET',
      path: base,
      handler: async (req) =>
        reply.ok(
          await store.read((s) => {
            const t = tracker(s);
            const items = def.filter ? def.filter(req, coll(t)) : coll(t);
            return items.map((x) => present(t, x, true, req));
          }),
        ),
    });
  }
  if (which.includes('create')) {
    routes.push({
      method: 'POST',
      path: base,
      handler: async (req) => {
        const body = await validate<B>(req);
        const out = await store.write((s) => {
          const t = tracker(s);
          const at = nowIso(ctx.now());
          const own = def.make ? def.make(body, t, at, req) : { ...body };
          const id = def.spec.idType === 'uuid' ? newGlobalId() : nextId(t);
          const record = {
            id,
            entity_type: def.entityType,
            app_url: `${APP_URL}/${def.entityType.replace(/-/g, '_')}/${id}`,
            created_at: at,
            updated_at: at,
            ...own,
          } as Item;
          coll(t).push(record);
          def.after?.(t, record);
          return { id, json: present(t, record, false) };
        });
        // no body, as the contract says; Location (standard HTTP, harmless to clients that ignore it) names the new record
        return def.createdNoContent ? { status: 204, headers: { location: `${base}/${encodeURIComponent(String(out.id))}` } } : reply.created(out.json);
      },
    });
  }
  if (which.includes('get')) {
    routes.push({
      method: 'GET',
      path: `${base}/:id`,
      handler: async (req) => {
        const id = idOf(req);
        return reply.ok(await store.read((s) => present(tracker(s), find(coll(tracker(s)), id, def.spec), false, req)));
      },
    });
  }
  if (which.includes('update')) {
    routes.push({
      method: 'PUT',
      path: `${base}/:id`,
      handler: async (req) => {
        const id = idOf(req);
        const body = await validate<Partial<B>>(req);
        return reply.ok(
          await store.write((s) => {
            const t = tracker(s);
            const item = find(coll(t), id, def.spec);
            const at = nowIso(ctx.now());
            if (def.change) def.change(item, body, t, at);
            else Object.assign(item, body);
            item.updated_at = at;
            def.after?.(t, item);
            return present(t, item, false);
          }),
        );
      },
    });
  }
  if (which.includes('delete')) {
    routes.push({
      method: 'DELETE',
      path: `${base}/:id`,
      handler: async (req) => {
        const id = idOf(req);
        await store.write((s) => {
          const t = tracker(s);
          const item = find(coll(t), id, def.spec);
          def.beforeDelete?.(t, item);
          t[def.coll] = coll(t).filter((x) => x !== item) as TrackerState[K];
        });
        return reply.noContent();
      },
    });
  }
  return routes;
}
