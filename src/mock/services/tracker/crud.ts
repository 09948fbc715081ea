import type { ResourceSpec } from '../../../tracker/resources.js';
import { reply, type MockRequest } from '../../http.js';
import type { Route, ServiceContext } from '../../service.js';
import { API, APP_URL, find, intParam, newGlobalId, nextId, nowIso, tracker, uuidParam, validate, type TrackerState } from './common.js';

/**
 * The routes of a plain resource (list, create, get, update, delete) over one collection of the store.
 * The hooks hold each resource's own rules; validation always comes from the shared resource table.
 */
export interface CrudDef {
  spec: ResourceSpec;
  /** The state collection, e.g. `categories`. */
  coll: string;
  entityType: string;
  /** Path under /api/v3 (default: the spec's). */
  path?: string;
  routes?: ReadonlyArray<'list' | 'create' | 'get' | 'update' | 'delete'>;
  /** The new record's own fields (id, timestamps, entity_type and app_url are added). */
  make?(body: Record<string, any>, t: TrackerState, at: string, req: MockRequest): Record<string, any>;
  /** Applies an update body; default copies the body's keys. */
  change?(item: any, body: Record<string, any>, t: TrackerState, at: string): void;
  present?(t: TrackerState, item: any, list: boolean, req?: MockRequest): any;
  filter?(req: MockRequest, items: any[]): any[];
  beforeDelete?(t: TrackerState, item: any): void;
  /** Runs inside the same transaction after a create or an update. */
  after?(t: TrackerState, item: any): void;
  /** 201 with the record (default), or 204 without a body. */
  createdNoContent?: boolean;
}

export function crudRoutes(ctx: ServiceContext, def: CrudDef): Route[] {
  const { store } = ctx;
  const base = `${API}${def.path ?? def.spec.path}`;
  const which = def.routes ?? def.spec.verbs;
  const present = (t: TrackerState, item: any, list: boolean, req?: MockRequest) => (def.present ? def.present(t, item, list, req) : { ...item });
  const idOf = (req: MockRequest) => (def.spec.idType === 'uuid' ? uuidParam(req, 'id') : intParam(req, 'id'));
  const coll = (t: TrackerState): any[] => t[def.coll] ?? [];
  const routes: Route[] = [];
  if (which.includes('list')) {
    routes.push({
      method: 'GET',
      path: base,
      handler: async (req) =>
        reply.ok(await store.read((s) => {
          const t = tracker(s);
          const items = def.filter ? def.filter(req, coll(t)) : coll(t);
          return items.map((x) => present(t, x, true, req));
        })),
    });
  }
  if (which.includes('create')) {
    routes.push({
      method: 'POST',
      path: base,
      handler: async (req) => {
        const body = await validate(def.spec.fields, 'create', req.body);
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
          };
          (t[def.coll] ??= []).push(record);
          def.after?.(t, record);
          return present(t, record, false);
        });
        // no body, as the contract says; Location (standard HTTP, harmless to clients that ignore it) names the new record
        return def.createdNoContent ? { status: 204, headers: { location: `${base}/${encodeURIComponent(String(out.id))}` } } : reply.created(out);
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
        const body = await validate(def.spec.fields, 'update', req.body ?? {});
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
          t[def.coll] = coll(t).filter((x) => x !== item);
        });
        return reply.noContent();
      },
    });
  }
  return routes;
}
