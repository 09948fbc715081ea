import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { startMock, trackerEnv } from '../helpers/mock.js';

/**
 * Names instead of ids (issue 19, item 1), through the built binary against the tracker mock: members by
 * mention name, email or @me; epics, iterations, labels, groups, workflow states by exact name (any case);
 * unknown or ambiguous names exit 2 with the candidates; at most one list request per kind per command.
 */
let mock: Awaited<ReturnType<typeof startMock>>;
let cfg: ReturnType<typeof tempConfigDir>;
let env: NodeJS.ProcessEnv;

async function ok(args: string[]): Promise<any> {
  const r = await runBin([...args, '--json'], { env });
  expect(r.exitCode, `${args.join(' ')}: ${String(r.stderr)}`).toBe(0);
  return JSON.parse(String(r.stdout));
}

/** The GET requests of the last command, by path. */
function gets(): string[] {
  return mock.requests.filter((q) => q.method === 'GET').map((q) => q.path);
}

let me: string;
let ada: string;
let epicId: number;
let iterationId: number;
let groupId: string;
let inProgress: number;

beforeAll(async () => {
  mock = await startMock({ services: ['tracker'] });
  cfg = tempConfigDir('opsctl-names-');
  env = trackerEnv(mock, cfg.dir);
  me = (await ok(['tracker', 'members', 'me'])).id;
  ada = (await ok(['tracker', 'members', 'list'])).find((m: any) => m.profile.mention_name === 'ada').id;
  epicId = (await ok(['tracker', 'epics', 'create', '--name', 'Q3 launch'])).id;
  iterationId = (await ok(['tracker', 'iterations', 'create', '--name', 'Sprint 1', '--start-date', '2026-01-05', '--end-date', '2026-01-19'])).id;
  groupId = (await ok(['tracker', 'groups', 'create', '--name', 'Platform', '--mention-name', 'platform-team'])).id;
  // a group whose mention name is another group's name makes "Platform" ambiguous only among groups' mention names
  await ok(['tracker', 'groups', 'create', '--name', 'Ops', '--mention-name', 'ops']);
  await ok(['tracker', 'groups', 'create', '--name', 'Operations', '--mention-name', 'OPS-x']);
  for (const name of ['bug', 'Bug fix']) await ok(['tracker', 'labels', 'create', '--name', name]);
  const workflows = await ok(['tracker', 'workflows', 'list']);
  inProgress = workflows[0].states.find((s: any) => s.name === 'In Progress').id;
});
afterAll(async () => {
  await mock.close();
  cfg.cleanup();
});

describe('names instead of ids (built binary)', () => {
  it('creates a story from names: @me, an email, a mention name, an epic, an iteration, a group and a state, one list request per kind', async () => {
    mock.requests.length = 0;
    const story = await ok([
      'tracker',
      'stories',
      'create',
      '--name',
      'by names',
      '--owner-ids',
      '@me,ada@example.com',
      '--follower-ids',
      '@ADA',
      '--requested-by-id',
      'ada',
      '--epic-id',
      'q3 LAUNCH',
      '--iteration-id',
      'sprint 1',
      '--group-id',
      '@platform-team',
      '--workflow-state-id',
      'in progress',
    ]);
    expect(story).toMatchObject({
      owner_ids: [me, ada],
      follower_ids: [ada],
      requested_by_id: ada,
      epic_id: epicId,
      iteration_id: iterationId,
      group_id: groupId,
      workflow_state_id: inProgress,
    });
    // members listed once for three flags; @me is the token's member (GET /member); every other kind once
    expect(gets().sort()).toEqual(['/api/v3/epics', '/api/v3/groups', '/api/v3/iterations', '/api/v3/member', '/api/v3/members', '/api/v3/workflows']);
    expect(mock.requests.filter((q) => q.method === 'POST').map((q) => q.path)).toEqual(['/api/v3/stories']);
  });

  it('ids are still ids: a number or a uuid makes no lookup', async () => {
    mock.requests.length = 0;
    const story = await ok(['tracker', 'stories', 'create', '--name', 'by ids', '--epic-id', String(epicId), '--owner-ids', ada]);
    expect(story).toMatchObject({ epic_id: epicId, owner_ids: [ada] });
    expect(gets()).toEqual([]);
  });

  it('get, update, delete and extra verbs take a name where they take an id', async () => {
    expect((await ok(['tracker', 'labels', 'get', 'BUG'])).name).toBe('bug');
    expect((await ok(['tracker', 'labels', 'update', 'bug fix', '--color', '#00ff00'])).color).toBe('#00ff00');
    expect((await ok(['tracker', 'epics', 'get', 'Q3 Launch'])).id).toBe(epicId);
    expect((await ok(['tracker', 'members', 'get', 'ada@example.com'])).id).toBe(ada);
    expect(Array.isArray(await ok(['tracker', 'epics', 'stories', 'q3 launch']))).toBe(true);
    await ok(['tracker', 'labels', 'create', '--name', 'doomed']);
    mock.requests.length = 0;
    const del = await runBin(['tracker', 'labels', 'delete', 'Doomed', '--yes'], { env });
    expect(del.exitCode, String(del.stderr)).toBe(0);
    expect(mock.requests.filter((q) => q.method === 'DELETE')).toHaveLength(1);
    expect((await ok(['tracker', 'labels', 'list'])).map((l: any) => l.name)).not.toContain('doomed');
  });

  it('filters take names too (stories search --owner-id @ada --epic-ids NAME)', async () => {
    const found = await ok(['tracker', 'stories', 'search', '--owner-id', '@ada', '--epic-ids', 'Q3 launch']);
    expect(found.map((s: any) => s.name).sort()).toEqual(['by ids', 'by names']);
  });

  it('an unknown name exits 2 listing the candidates, and sends nothing', async () => {
    mock.requests.length = 0;
    const r = await runBin(['tracker', 'stories', 'create', '--name', 'x', '--epic-id', 'Q3'], { env });
    expect(r.exitCode).toBe(2);
    expect(String(r.stderr)).toContain('X --epic-id: no epic is named "Q3"');
    expect(String(r.stderr)).toContain('choose one of: "Q3 launch" (epic');
    expect(mock.requests.filter((q) => q.method !== 'GET')).toEqual([]);
  });

  it('lists at most 10 candidates and a count', async () => {
    for (let i = 0; i < 11; i++)
      await ok(['tracker', 'iterations', 'create', '--name', `Sprint x${i}`, '--start-date', '2026-02-02', '--end-date', '2026-02-16']);
    const r = await runBin(['tracker', 'iterations', 'get', 'Sprint 99'], { env });
    expect(r.exitCode).toBe(2);
    const hint = String(r.stderr).split('\n')[1]!;
    expect(hint.match(/"Sprint /g)).toHaveLength(10);
    expect(hint).toContain('and 2 more (12 in all)');
  });

  it('an ambiguous name exits 2 naming each match with its id', async () => {
    // "ops" is the mention name of one group and (any case) part of no other name: unique
    expect((await ok(['tracker', 'groups', 'get', '@ops'])).name).toBe('Ops');
    const clash = await ok(['tracker', 'groups', 'create', '--name', 'ops-x', '--mention-name', 'other']);
    const r = await runBin(['tracker', 'stories', 'create', '--name', 'x', '--group-id', 'ops-x'], { env });
    expect(r.exitCode).toBe(2);
    expect(String(r.stderr)).toContain('X --group-id: "ops-x" names 2 groups');
    expect(String(r.stderr)).toContain(`"Operations" (@OPS-x)`);
    expect(String(r.stderr)).toContain(`"ops-x" (@other)`);
    expect(clash.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('stories move --state never takes a prefix ("do" is not "Done")', async () => {
    const story = await ok(['tracker', 'stories', 'create', '--name', 'to move']);
    mock.requests.length = 0;
    const r = await runBin(['tracker', 'stories', 'move', String(story.id), '--state', 'do'], { env });
    expect(r.exitCode).toBe(2);
    expect(String(r.stderr)).toContain('no workflow state is named "do"');
    expect(mock.requests.filter((q) => q.method === 'PUT')).toEqual([]);
    const moved = await ok(['tracker', 'stories', 'move', String(story.id), '--state', 'DONE']);
    expect(moved.workflow_state_id).not.toBe(story.workflow_state_id);
  });

  it('help says which flags and arguments take names', async () => {
    const r = await runBin(['tracker', 'stories', 'create', '--help'], { env });
    const help = String(r.stdout).replace(/\s+/g, ' ');
    expect(help).toContain('--owner-ids <members> owner member ids (comma-separated; each a mention name, email, @me or id)');
    expect(help).toContain('--requested-by-id <member>');
    expect(String(r.stdout)).toMatch(/--epic-id <name\|id>/);
    const get = await runBin(['tracker', 'labels', 'get', '--help'], { env });
    expect(String(get.stdout)).toContain('opsctl tracker labels get|view [options] <id|name>');
  });
});
