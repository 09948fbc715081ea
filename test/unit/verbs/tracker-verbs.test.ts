import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { run as list } from '../../../src/commands/tracker/list.js';
import { run as move } from '../../../src/commands/tracker/move.js';
import { verbHarness, type VerbHarness } from '../../helpers/httpmock.js';

const ORIGIN = 'https://tracker.test';
const WORKFLOWS = [
  {
    id: 500,
    name: 'Engineering',
    states: [
      { id: 501, name: 'Backlog', type: 'unstarted' },
      { id: 502, name: 'In Progress', type: 'started' },
      { id: 503, name: 'Done', type: 'done' },
    ],
  },
];

let dir: string;
let h: VerbHarness;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'opsctl-unit-'));
  h = verbHarness({ OPSCTL_CONFIG_DIR: dir, OPSCTL_TRACKER_URL: ORIGIN, OPSCTL_TRACKER_TOKEN: 'unit-token', OPSCTL_TRACKER_PACING: 'process' });
});
afterEach(async () => {
  await h.verify();
  rmSync(dir, { recursive: true, force: true });
});

describe('tracker list (run with a fake HTTP client)', () => {
  it('GETs the resource with the token in Tracker-Token and returns its rows with the table columns', async () => {
    let token: unknown;
    h.agent
      .get(ORIGIN)
      .intercept({ path: '/api/v3/labels', method: 'GET' })
      .reply(200, (req) => {
        token = (req.headers as Record<string, string>)['Tracker-Token'] ?? (req.headers as Record<string, string>)['tracker-token'];
        return [
          { id: 1, name: 'bug', color: '#ff0000', archived: false },
          { id: 2, name: 'chore', color: null, archived: true },
        ];
      });
    const result = await list({ resource: 'labels', fields: {}, all: false, limit: undefined }, h.ctx);
    expect(token).toBe('unit-token');
    expect((result.data as Array<{ name: string }>).map((l) => l.name)).toEqual(['bug', 'chore']);
    expect(result.columns?.map((c) => c.key)).toContain('name');
  });

  it('a 401 from the service is an auth error (exit 4) naming the fix, the token never in it', async () => {
    h.agent.get(ORIGIN).intercept({ path: '/api/v3/labels', method: 'GET' }).reply(401, { message: 'Unauthorized' });
    const err = (await list({ resource: 'labels', fields: {}, all: false, limit: undefined }, h.ctx).catch((e: unknown) => e)) as Error & { exitCode?: number };
    expect(err).toBeInstanceOf(Error);
    expect(err.exitCode).toBe(4);
    expect(`${err.message} ${JSON.stringify(err)}`).not.toContain('unit-token');
  });
});

describe('tracker stories move (run with a fake HTTP client)', () => {
  it('resolves the state by name within the story’s workflow and sends one update with its id', async () => {
    h.agent.get(ORIGIN).intercept({ path: '/api/v3/stories/12', method: 'GET' }).reply(200, { id: 12, workflow_id: 500, workflow_state_id: 501 });
    h.agent.get(ORIGIN).intercept({ path: '/api/v3/workflows', method: 'GET' }).reply(200, WORKFLOWS);
    let sent: unknown;
    h.agent
      .get(ORIGIN)
      .intercept({ path: '/api/v3/stories/12', method: 'PUT' })
      .reply(200, (req) => {
        sent = JSON.parse(req.body as string);
        return { id: 12, workflow_id: 500, workflow_state_id: 502 };
      });
    const result = await move({ id: '12', state: 'in progress' }, h.ctx);
    expect(sent).toEqual({ workflow_state_id: 502 });
    expect(result.message).toBe('story 12: Backlog → In Progress');
  });

  it('an unknown state is refused naming the states, and nothing is written', async () => {
    h.agent.get(ORIGIN).intercept({ path: '/api/v3/stories/12', method: 'GET' }).reply(200, { id: 12, workflow_id: 500, workflow_state_id: 501 });
    h.agent.get(ORIGIN).intercept({ path: '/api/v3/workflows', method: 'GET' }).reply(200, WORKFLOWS);
    const err = (await move({ id: '12', state: 'Shipped' }, h.ctx).catch((e: unknown) => e)) as Error & { exitCode?: number };
    expect(err.exitCode).toBe(2);
    expect(`${err.message} ${(err as { hint?: string }).hint ?? ''}`).toMatch(/Backlog.*In Progress.*Done|Shipped/s);
  });

  it('a bad id is refused before any request', async () => {
    await expect(move({ id: '12; rm', state: 'Done' }, h.ctx)).rejects.toThrow(/not an integer id/);
  });
});
