import { MockError, type MockRequest } from '../../http.js';
import type { Route, ServiceModule } from '../../service.js';
import { errorReply, tracker } from './common.js';
import { epicCommentRoutes } from './epic-comments.js';
import { epicRoutes } from './epics.js';
import { fileRoutes } from './files.js';
import { groupRoutes } from './groups.js';
import { iterationProjectRoutes } from './iterations.js';
import { labelRoutes } from './labels.js';
import { miscRoutes } from './misc.js';
import { planningRoutes } from './objectives.js';
import { searchRoutes } from './search.js';
import { shapeReply } from './shape.js';
import { initTracker } from './state.js';
import { storyRoutes } from './stories.js';
import { storyBulkRoutes } from './story-bulk.js';
import { storyPartRoutes } from './story-parts.js';
import { workflowRoutes } from './workflows.js';
import { documentRoutes } from './documents.js';
import { OPENAPI_PATH, openapiRoute } from './openapi.js';

export const DEFAULT_RATE_LIMIT = { limit: 200, windowMs: 60_000 };

/**
 * The token a request carries: the seed's `Tracker-Token` header, the real service's `Shortcut-Token`
 * (what the official client sends by default), or the deprecated `token` query parameter.
 */
export function requestToken(req: MockRequest): string | undefined {
  for (const name of ['tracker-token', 'shortcut-token']) {
    const header = req.headers[name];
    if (typeof header === 'string' && header) return header;
  }
  return req.query.get('token') ?? undefined;
}

const trackerService: ServiceModule = {
  name: 'tracker',
  initState: initTracker,
  create(ctx) {
    const rate = ctx.options.tracker?.rateLimit ?? DEFAULT_RATE_LIMIT;
    return {
      routes: [
        ...labelRoutes(ctx),
        ...planningRoutes(ctx),
        ...miscRoutes(ctx),
        ...epicRoutes(ctx),
        ...epicCommentRoutes(ctx),
        ...fileRoutes(ctx),
        ...groupRoutes(ctx),
        ...iterationProjectRoutes(ctx),
        ...storyRoutes(ctx),
        ...storyBulkRoutes(ctx),
        ...storyPartRoutes(ctx),
        ...workflowRoutes(ctx),
        ...documentRoutes(ctx),
        ...searchRoutes(ctx),
      ]
        .map((r): Route => ({ ...r, handler: async (req: MockRequest) => shapeReply(await r.handler(req)) }))
        // the contract itself is served as it is (no record shaping), and without a token
        .concat(openapiRoute()),
      errorReply,
      async authenticate(req) {
        if (req.path === OPENAPI_PATH && req.method === 'GET') return;
        const token = requestToken(req);
        const valid = await ctx.store.read((s) => tracker(s).token);
        if (!token) throw new MockError(401, 'unauthorized', 'missing Tracker-Token (or Shortcut-Token) header');
        if (token !== valid) throw new MockError(401, 'unauthorized', 'invalid tracker token');
      },
      rateLimit: { ...rate, key: (req) => requestToken(req) ?? 'anonymous' },
    };
  },
};

export default trackerService;
