import { describe, expect, it } from 'vitest';
import { request } from 'undici';
import { runCli } from '../helpers/cli.js';
import { startMock } from '../helpers/mock.js';
import { useTrackerMock } from '../helpers/tracker.js';

const t = useTrackerMock((tracker) => {
  tracker.labels = [];
});

const cli = t.cli;

describe('tracker labels CRUD against the mock over HTTP', () => {
  it("counts a label's epics by their workflow state (to do, in progress, done)", async () => {
    const label = (await cli('tracker', 'labels', 'create', '--name', 'epic-stats', '--json')).json();
    for (const [name, state] of [
      ['E todo', 'To Do'],
      ['E doing', 'In Progress'],
      ['E done', 'Done'],
      ['E done 2', 'Done'],
    ] as const) {
      const r = await cli(
        'tracker',
        'epics',
        'create',
        '--name',
        name,
        '--epic-state-id',
        state,
        '--data',
        JSON.stringify({ labels: [{ name: 'epic-stats' }] }),
      );
      expect(r.code, r.stderr).toBe(0);
    }
    const stats = (await cli('tracker', 'labels', 'get', String(label.id), '--json')).json().stats;
    expect(stats).toMatchObject({ num_epics_total: 4, num_epics_unstarted: 1, num_epics_in_progress: 1, num_epics_completed: 2 });
  });

  it('creates, reads, lists, updates and deletes a label with every field', async () => {
    const created = await cli(
      'tracker',
      'labels',
      'create',
      '--name',
      'bug',
      '--description',
      'broken things',
      '--color',
      '#FF0000',
      '--external-id',
      'ext-1',
      '--json',
    );
    expect(created.code).toBe(0);
    const label = created.json();
    expect(label).toMatchObject({ name: 'bug', description: 'broken things', color: '#FF0000', external_id: 'ext-1', archived: false, entity_type: 'label' });
    expect(typeof label.id).toBe('number');
    expect(label.stats.num_stories_total).toBe(0);

    const got = await cli('tracker', 'labels', 'get', String(label.id), '--json=id,name,stats');
    expect(got.code).toBe(0);
    expect(Object.keys(got.json())).toEqual(['id', 'name', 'stats']);

    const updated = await cli('tracker', 'labels', 'update', String(label.id), '--name', 'defect', '--archived', '--color', 'null', '--json');
    expect(updated.code).toBe(0);
    expect(updated.json()).toMatchObject({ name: 'defect', archived: true, color: null });

    const listed = await cli('tracker', 'labels', 'list');
    expect(listed.code).toBe(0);
    expect(listed.stdout.trim().split('\t').slice(0, 4)).toEqual([String(label.id), 'defect', '', 'true']);

    const slim = await cli('tracker', 'labels', 'list', '--slim', '--json');
    expect(slim.json()[0].stats).toBeUndefined();

    const del = await cli('tracker', 'labels', 'delete', String(label.id), '--yes');
    expect(del.code).toBe(0);
    const gone = await cli('tracker', 'labels', 'get', String(label.id));
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('HTTP 404');
  });

  it('prints an aligned table with a header on a TTY', async () => {
    await cli('tracker', 'labels', 'create', '--name', 'alpha', '--color', '#00ff00');
    const r = await runCli(['tracker', 'labels', 'list'], { env: t.env, tty: true });
    const [header, row] = r.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^ID\s+NAME\s+COLOR\s+ARCHIVED\s+DESCRIPTION$/);
    expect(row).toMatch(/^\d+\s+alpha\s+#00ff00\s+false$/);
  });
});

describe('rejections', () => {
  it('refuses the colour "red" before sending, naming the flag (exit 2)', async () => {
    const r = await cli('tracker', 'labels', 'create', '--name', 'x', '--color', 'red');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--color');
    expect(t.mock.requests).toHaveLength(0);
  });

  it('refuses a 129-character name before sending', async () => {
    const r = await cli('tracker', 'labels', 'create', '--name', 'n'.repeat(129));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--name: must be at most 128 characters (got 129)');
    expect(t.mock.requests).toHaveLength(0);
  });

  it('refuses a missing name before sending', async () => {
    const r = await cli('tracker', 'labels', 'create', '--color', '#123456');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--name: is required');
    expect(t.mock.requests).toHaveLength(0);
  });

  it('reports an unknown id as 404 from the server', async () => {
    const r = await cli('tracker', 'labels', 'get', '999999');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/HTTP 404: label 999999 does not exist/);
  });

  it('takes a non-integer argument as a name: an unknown one exits 2 after one list read; a resource without names sends nothing', async () => {
    const r = await cli('tracker', 'labels', 'get', 'abc');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no label is named "abc"');
    expect(t.mock.requests.map((q) => `${q.method} ${q.path}`)).toEqual(['GET /api/v3/labels']);
    t.mock.requests.length = 0;
    const story = await cli('tracker', 'stories', 'get', 'abc');
    expect(story.code).toBe(2);
    expect(t.mock.requests).toHaveLength(0);
  });

  it('reports a duplicate name as 422', async () => {
    expect((await cli('tracker', 'labels', 'create', '--name', 'dup')).code).toBe(0);
    const r = await cli('tracker', 'labels', 'create', '--name', 'dup');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/HTTP 422: a label named "dup" already exists/);
  });

  it('exits 4 without a token, and the server says 401', async () => {
    const r = await runCli(['tracker', 'labels', 'list'], { env: { OPSCTL_CONFIG_DIR: t.dir, OPSCTL_TRACKER_URL: t.mock.url } });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('no tracker token');
    const bad = await runCli(['tracker', 'labels', 'list'], { env: { ...t.env, OPSCTL_TRACKER_TOKEN: 'wrong' } });
    expect(bad.code).toBe(4);
    expect(bad.stderr).toContain('HTTP 401');
  });

  it('prints errors as JSON on stderr with --json', async () => {
    const r = await cli('tracker', 'labels', 'create', '--name', 'x', '--color', 'blue', '--json');
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stderr)).toMatchObject({ error: { code: 'validation', field: '--color' } });
  });
});

describe('the mock tracker itself', () => {
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    request(`${t.mock.url}/api/v3${path}`, {
      method: method as 'GET',
      headers: { 'content-type': 'application/json', 'tracker-token': t.mock.trackerToken, ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    }).then(async (r) => ({ status: r.statusCode, body: (await r.body.json().catch(() => undefined)) as any, headers: r.headers }));

  it('answers the seed statuses: 201, 200, 204, 400, 404, 422 and an other-4xx for over-long strings', async () => {
    const c = await call('POST', '/labels', { name: 'a' });
    expect(c.status).toBe(201);
    expect((await call('GET', `/labels/${c.body.id}`)).status).toBe(200);
    expect((await call('PUT', `/labels/${c.body.id}`, { description: 'd' })).status).toBe(200);
    expect((await call('POST', '/labels', { name: 'b', color: 'red' })).status).toBe(400);
    expect((await call('POST', '/labels', { name: 'b', bogus: 1 })).status).toBe(400);
    expect((await call('POST', '/labels', '{not json')).status).toBe(400);
    expect((await call('POST', '/labels', { name: 'x'.repeat(129) })).status).toBe(413);
    expect((await call('PUT', `/labels/${c.body.id}`, { archived: 'yes' })).status).toBe(400);
    expect((await call('GET', '/labels/424242')).status).toBe(404);
    expect((await call('POST', '/labels', { name: 'A' })).status).toBe(422);
    const b = await call('POST', '/labels', { name: 'b' });
    expect((await call('PUT', `/labels/${b.body.id}`, { name: 'a' })).status).toBe(422);
    expect((await call('DELETE', `/labels/${c.body.id}`)).status).toBe(204);
    expect((await call('DELETE', `/labels/${c.body.id}`)).status).toBe(404);
  });

  it('accepts the deprecated token query parameter and refuses a missing token with 401', async () => {
    const r = await request(`${t.mock.url}/api/v3/labels?token=${t.mock.trackerToken}`);
    expect(r.statusCode).toBe(200);
    await r.body.dump();
    const none = await request(`${t.mock.url}/api/v3/labels`);
    expect(none.statusCode).toBe(401);
    expect(await none.body.json()).toMatchObject({ message: 'missing Tracker-Token (or Shortcut-Token) header' });
  });

  it('answers 429 with Retry-After past 200 requests a minute', async () => {
    const limited = await startMock({ services: ['tracker'], options: { tracker: { rateLimit: { limit: 5, windowMs: 60_000 } } } });
    try {
      const statuses: number[] = [];
      let retryAfter: string | undefined;
      for (let i = 0; i < 6; i++) {
        const r = await request(`${limited.url}/api/v3/labels`, { headers: { 'tracker-token': limited.trackerToken } });
        statuses.push(r.statusCode);
        if (r.statusCode === 429) retryAfter = String(r.headers['retry-after']);
        await r.body.dump();
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
      expect(Number(retryAfter)).toBeGreaterThan(0);
    } finally {
      await limited.close();
    }
  });
});
