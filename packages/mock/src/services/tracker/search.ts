import { MockError, reply, type MockRequest } from '../../http.js';
import type { Route, ServiceContext } from '../../service.js';
import { API, intQuery, tracker, type TrackerState } from './common.js';
import { presentEpic } from './epics.js';
import { presentIteration } from './iterations.js';
import { presentObjective } from './objectives.js';
import { presentStory } from './stories.js';

type Kind = 'stories' | 'epics' | 'iterations' | 'milestones' | 'objectives';
const MAX_RESULTS = 1000;

/** What a search matches on and sorts by (stories, epics, iterations and objectives as the API shows them). */
interface Searchable {
  id: number;
  name: string;
  description?: string;
}

/** Every whitespace-separated term must appear in the name or description (case-insensitive). */
function matcher(query: string): (r: Searchable) => boolean {
  const terms = query.toLowerCase().split(/\s+/).filter(Boolean);
  return (r) => {
    const hay = `${r.name ?? ''}\n${r.description ?? ''}`.toLowerCase();
    return terms.every((term) => hay.includes(term));
  };
}

function records(t: TrackerState, kind: Kind, slim: boolean, now: number): Searchable[] {
  switch (kind) {
    case 'stories':
      return t.stories.map((s) => presentStory(t, s, !slim));
    case 'epics':
      return t.epics.map((e) => presentEpic(t, e, slim));
    case 'iterations':
      return t.iterations.map((i) => presentIteration(t, i, true, now));
    default:
      return t.objectives.map((o) => presentObjective(t, o));
  }
}

interface SearchParams {
  query: string;
  pageSize: number;
  detail: 'full' | 'slim';
  offset: number;
}

function params(req: MockRequest): SearchParams {
  const query = req.query.get('query');
  if (!query) throw new MockError(400, 'schema_mismatch', 'schema mismatch: query parameter query is required');
  const pageSize = intQuery(req, 'page_size', 25, 1, 250);
  const detail = req.query.get('detail') ?? 'full';
  if (detail !== 'full' && detail !== 'slim') throw new MockError(400, 'schema_mismatch', 'schema mismatch: detail must be full or slim');
  const next = req.query.get('next');
  let offset = 0;
  if (next !== null) {
    const decoded = Buffer.from(next, 'base64url').toString('utf8');
    if (!/^o:\d+$/.test(decoded)) throw new MockError(400, 'schema_mismatch', 'schema mismatch: next is not a page token from this search');
    offset = Number(decoded.slice(2));
  }
  // the document's 400 MaxSearchResultsExceededError: no page may reach past the 1,000th result
  if (offset >= MAX_RESULTS) throw new MockError(400, 'MaxSearchResultsExceededError', `A maximum of ${MAX_RESULTS} search results are supported.`);
  return { query, pageSize, detail, offset };
}

/** One page of one kind: {data, next, total}; `next` is the path and query of the following page. */
function page(t: TrackerState, kind: Kind, p: SearchParams, now: number): { data: Searchable[]; next: string | null; total: number } {
  const all = records(t, kind, p.detail === 'slim', now)
    .filter(matcher(p.query))
    .sort((a, b) => a.id - b.id);
  const total = all.length;
  const reachable = all.slice(0, MAX_RESULTS);
  const data = reachable.slice(p.offset, p.offset + p.pageSize);
  const end = p.offset + p.pageSize;
  let next: string | null = null;
  if (end < reachable.length) {
    const q = new URLSearchParams({ query: p.query, page_size: String(p.pageSize), detail: p.detail, next: Buffer.from(`o:${end}`).toString('base64url') });
    next = `${API}/search/${kind}?${q.toString()}`;
  }
  return { data, next, total };
}

export function searchRoutes(ctx: ServiceContext): Route[] {
  const kinds: Kind[] = ['stories', 'epics', 'iterations', 'milestones', 'objectives'];
  const routes: Route[] = kinds.map((kind) => ({
    method: 'GET',
    path: `${API}/search/${kind}`,
    handler: async (req) => {
      const p = params(req);
      return reply.ok(await ctx.store.read((s) => page(tracker(s), kind, p, ctx.now())));
    },
  }));
  routes.push({
    method: 'GET',
    path: `${API}/search`,
    handler: async (req) => {
      const p = params(req);
      const types = req.query.getAll('entity_types').flatMap((v) => v.split(','));
      const allowed = ['story', 'epic', 'iteration', 'milestone', 'objective'];
      for (const ty of types)
        if (!allowed.includes(ty)) throw new MockError(400, 'schema_mismatch', `schema mismatch: entity_types: "${ty}" is not one of ${allowed.join(', ')}`);
      const want = (ty: string) => types.length === 0 || types.includes(ty);
      return reply.ok(
        await ctx.store.read((s) => {
          const t = tracker(s);
          const out: Record<string, unknown> = {};
          if (want('epic')) out.epics = page(t, 'epics', p, ctx.now());
          if (want('story')) out.stories = page(t, 'stories', p, ctx.now());
          if (want('iteration')) out.iterations = page(t, 'iterations', p, ctx.now());
          if (want('milestone') || want('objective')) out.milestones = page(t, 'milestones', p, ctx.now());
          return out;
        }),
      );
    },
  });
  return routes;
}
