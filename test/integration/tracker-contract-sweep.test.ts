import { ShortcutClient } from '@shortcut/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATIONS, type OperationId } from '@opsctl/shared/tracker/contract.js';
import type { ContractOperation } from '@opsctl/shared/tracker/shape.js';
import overrides from '../../packages/shared/src/tracker/overrides.json' with { type: 'json' };
import { requestsFor, type Ids, type SweepRequest } from '../helpers/contract-sweep.js';
import { startMock } from '../helpers/mock.js';
import { startValidatingProxy, type ValidatingProxy } from '../helpers/validating-proxy.js';

/**
 * Issue 25, item 7: an independent validator of the real OpenAPI document (test/helpers/validating-proxy.ts,
 * ajv over shared/ref's Swagger, not src/contract) stands between a client and the tracker mock:
 *  - the official client (@shortcut/client) calls every operation of the document, apart from the ones the
 *    seed renames (listed below with the reason; a test keeps the list equal to overrides.json);
 *  - a sweep generated from the schema sends, for every operation, its required fields, then each optional
 *    field (each enum value, strings at their longest, integers at their bounds, null where allowed).
 * Any request or answer off the document is a problem; the mock refusing a spec-valid field (its 400 schema
 * mismatch, its 413 over a limit) is counted, and both must be none. Ids refer to records made first.
 */

/** Operations the official client cannot reach on the mock, each for a seed rename (overrides.json). */
const SKIPPED: Record<string, string> = {
  unlinkProductboardFromEpic: 'the seed renames the path segment unlink-productboard to unlink-planningtool (overrides.json pathSegments)',
};

let mock: Awaited<ReturnType<typeof startMock>>;
let proxy: ValidatingProxy;
let running = false;
const ids: Ids = {};

async function api(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${proxy.url}/api/v3${path}`, {
    method,
    headers: { 'tracker-token': mock.trackerToken, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** One record of each kind the operations refer to, made through the proxy. */
let round = 0;
async function makeRecords(): Promise<void> {
  const n = ++round;
  const me = await api('GET', '/member');
  ids.member = me.id;
  const [workflow] = await api('GET', '/workflows');
  ids.workflow = workflow.id;
  ids.team = workflow.team_id;
  ids.workflowState = workflow.states[0].id;
  ids.epicState = (await api('GET', '/epic-workflow')).epic_states[0].id;
  const fields = await api('GET', '/custom-fields');
  const enabled = fields.filter((f: { enabled: boolean }) => f.enabled);
  ids.customField = enabled[0]?.id;
  ids.customField2 = fields.find((f: { id: string }) => f.id !== ids.customField)?.id;
  ids.customFieldValue = enabled[0]?.values?.[0]?.id;
  ids.repository = (await api('GET', '/repositories'))[0]?.id;
  ids.category = (await api('POST', '/categories', { name: `sweep category ${n}` })).id;
  ids.group = (await api('POST', '/groups', { name: `sweep group ${n}`, mention_name: `sweep-group-${n}` })).id;
  ids.project = (await api('POST', '/projects', { name: `sweep project ${n}`, team_id: ids.team })).id;
  ids.label = (await api('POST', '/labels', { name: `sweep label ${n}` })).id;
  ids.epic = (await api('POST', '/epics', { name: 'sweep epic' })).id;
  ids.epic2 = (await api('POST', '/epics', { name: 'sweep epic 2' })).id;
  ids.iteration = (await api('POST', '/iterations', { name: 'sweep iteration', start_date: '2026-01-05', end_date: '2026-01-19' })).id;
  const objective = await api('POST', '/objectives', { name: 'sweep objective' });
  ids.objective = objective.id;
  ids.objective2 = (await api('POST', '/objectives', { name: 'sweep objective 2' })).id;
  ids.milestone = (await api('POST', '/milestones', { name: 'sweep milestone' })).id;
  ids.milestone2 = (await api('POST', '/milestones', { name: 'sweep milestone 2' })).id;
  const objectives = (await api('GET', '/objectives')) as Array<{ key_result_ids?: string[] }>;
  ids.keyResult = objectives.flatMap((o) => o.key_result_ids ?? [])[0];
  ids.story = (await api('POST', '/stories', { name: 'sweep story', workflow_state_id: ids.workflowState })).id;
  ids.story2 = (await api('POST', '/stories', { name: 'sweep story 2', workflow_state_id: ids.workflowState })).id;
  ids.storyComment = (await api('POST', `/stories/${ids.story}/comments`, { text: 'sweep comment' })).id;
  ids.epicComment = (await api('POST', `/epics/${ids.epic}/comments`, { text: 'sweep epic comment' })).id;
  ids.task = (await api('POST', `/stories/${ids.story}/tasks`, { description: 'sweep task' })).id;
  ids.task2 = (await api('POST', `/stories/${ids.story}/tasks`, { description: 'sweep task 2' })).id;
  ids.storyLink = (await api('POST', '/story-links', { subject_id: ids.story, object_id: ids.story2, verb: 'relates to' })).id;
  ids.doc = (await api('POST', '/documents', { title: 'sweep doc', content: 'c' })).id;
  ids.template = (await api('POST', '/entity-templates', { name: `sweep template ${n}`, story_contents: { name: 'from the template' } })).id;
  ids.linkedFile = (await api('POST', '/linked-files', { name: 'sweep link', url: 'https://example.com/f', type: 'url' })).id;
  ids.health = (await api('POST', `/epics/${ids.epic}/health`, { status: 'On Track' })).id;
  const form = new FormData();
  form.append('file0', new Blob(['sweep']), 'sweep.txt');
  const up = await fetch(`${proxy.url}/api/v3/files`, { method: 'POST', headers: { 'tracker-token': mock.trackerToken }, body: form });
  ids.file = ((await up.json()) as Array<{ id: number }>)[0]?.id;
  const hook = await fetch(`${proxy.url}/api/v3/integrations/webhook`, {
    method: 'POST',
    headers: { 'tracker-token': mock.trackerToken, 'content-type': 'application/json' },
    body: JSON.stringify({ webhook_url: 'https://example.com/hook' }),
  });
  ids.webhook = Number((hook.headers.get('location') ?? '').split('/').pop()) || undefined;
}

/** Runs last: what deletes records or turns features off (the rest first, so their ids still exist). */
function late(op: string): number {
  if (op === 'enableIterations' || op === 'enableStoryTemplates') return 2;
  if (op.startsWith('disable')) return 1;
  if (OPERATIONS[op as OperationId].method === 'DELETE') return op === 'deleteMultipleStories' ? 4 : 3;
  return 0;
}
/** The deletes of what hangs off a record (comments, tasks, links) before the record's own. */
const depth = (op: OperationId) => (late(op) === 3 ? -OPERATIONS[op].path.split('/').length : 0);
const ORDERED = (Object.keys(OPERATIONS) as OperationId[]).sort((a, b) => late(a) - late(b) || depth(a) - depth(b));

/** A refusal of a spec-valid request: the mock's schema mismatch (400) or over-a-limit (413). */
function refused(status: number, text: string): boolean {
  return (status === 400 && !text.includes('maximum-results-exceeded')) || status === 413;
}

/** A fresh mock (no rate limit: the sweep sends hundreds of requests a second) behind a fresh proxy, with its records. */
async function start(): Promise<void> {
  await stop();
  mock = await startMock({ services: ['tracker'], options: { tracker: { rateLimit: { limit: 1_000_000, windowMs: 60_000 } } } });
  proxy = await startValidatingProxy(mock.url);
  running = true;
  await makeRecords();
}
async function stop(): Promise<void> {
  if (!running) return;
  running = false;
  await proxy.close();
  await mock.close();
}
beforeAll(start);
afterAll(stop);

describe('the tracker mock against the real document, through the validating proxy', () => {
  it("the official client's skipped operations are exactly the seed's path renames (overrides.json)", () => {
    const renamedPaths = overrides.pathSegments.map((r) => r.from);
    const renamedOps = Object.entries(OPERATIONS)
      .filter(([, o]) => overrides.pathSegments.some((r) => o.path.includes(r.to)))
      .map(([id]) => id);
    expect(Object.keys(SKIPPED).sort()).toEqual(renamedOps.sort());
    for (const reason of Object.values(SKIPPED)) expect(renamedPaths.some((p) => reason.includes(p))).toBe(true);
  });

  it('the official client (@shortcut/client) calls every other operation: 0 problems, 0 spec-valid fields refused', async () => {
    const sc = new ShortcutClient(mock.trackerToken, { baseURL: proxy.url }) as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const before = proxy.problems.length;
    const refusals: string[] = [];
    let called = 0;
    let ok = 0;
    for (const op of ORDERED) {
      if (SKIPPED[op]) continue;
      const [req] = requestsFor(op, ids) as [SweepRequest];
      const o: ContractOperation = OPERATIONS[op];
      // a multipart body is given to the client as fields, which it makes into a form itself
      const body = o.formData ? { file0: new File(['sweep'], 'sweep.txt') } : req.body;
      const args = [...req.pathValues, ...(o.body || o.formData ? [body] : []), ...(req.query !== undefined ? [req.query] : [])];
      expect(typeof sc[op], op).toBe('function');
      try {
        await sc[op]!(...args);
        ok++;
      } catch (err) {
        const res = (err as { response?: { status: number; data: unknown } }).response;
        if (!res) throw err;
        if (refused(res.status, JSON.stringify(res.data))) refusals.push(`${op}: ${res.status} ${JSON.stringify(res.data)}`);
      }
      called++;
    }
    expect(proxy.problems.slice(before)).toEqual([]);
    expect(refusals).toEqual([]);
    expect(called).toBe(Object.keys(OPERATIONS).length - Object.keys(SKIPPED).length);
    // the rest are the mock's answers about the records (a deleted one is 404), valid against the document too
    expect(ok).toBeGreaterThan(called * 0.9);
    console.log(`official client: ${called} operations called through the validating proxy, ${ok} answered 2xx`);
  });

  it('a schema-driven sweep over every operation: 0 spec-valid fields refused, every answer valid against the document', async () => {
    // a fresh workspace: the client's calls above deleted records, the seeded custom fields among them
    await start();
    const before = proxy.problems.length;
    const refusals: string[] = [];
    let sent = 0;
    const statuses: Record<number, number> = {};
    for (const op of ORDERED) {
      for (const req of requestsFor(op, ids)) {
        const o: ContractOperation = OPERATIONS[op];
        const url = new URL(`${proxy.url}/api/v3${req.path}`);
        for (const [k, v] of Object.entries(req.query ?? {})) url.searchParams.set(k, Array.isArray(v) ? v.join(',') : String(v));
        let body: BodyInit | undefined;
        const headers: Record<string, string> = { 'tracker-token': mock.trackerToken };
        if (o.formData) {
          const form = new FormData();
          form.append('file0', new Blob(['sweep']), 'sweep.txt');
          body = form;
        } else if (req.body !== undefined) {
          body = JSON.stringify(req.body);
          headers['content-type'] = 'application/json';
        }
        const res = await fetch(url, { method: req.method, headers, body });
        const text = await res.text();
        sent++;
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        if (res.status >= 300 && process.env.SWEEP_DEBUG) console.log(`${op} ${req.what}: ${res.status} ${text.slice(0, 160)}`);
        if (refused(res.status, text)) refusals.push(`${op} ${req.what}: ${res.status} ${text.slice(0, 200)}`);
      }
    }
    expect(proxy.problems.slice(before)).toEqual([]);
    expect(refusals).toEqual([]);
    // every operation of the document was sent at least once (the proxy names them by the document's paths)
    expect(proxy.seen.size).toBe(Object.keys(OPERATIONS).length);
    expect(sent).toBeGreaterThan(700);
    // the requests refer to records that exist: nearly all succeed (the others are 404/422 about the records)
    const succeeded = Object.entries(statuses).reduce((n, [code, count]) => n + (Number(code) < 300 ? count : 0), 0);
    expect(succeeded).toBeGreaterThan(sent * 0.95);
    expect(Object.keys(statuses).filter((code) => code === '429' || Number(code) >= 500)).toEqual([]);
    console.log(`sweep: ${sent} spec-valid requests over ${ORDERED.length} operations, ${refusals.length} refused; statuses ${JSON.stringify(statuses)}`);
  });
});
