import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempConfigDir } from '../helpers/cli.js';
import { LABEL_SCOPES, mintToken } from '../helpers/labels.js';
import { useTrackerMock } from '../helpers/tracker.js';
import { startMock } from '../helpers/mock.js';

const t = useTrackerMock();

describe('bad input is exit 2 before any request', () => {
  it.each(['80', '1023', '70000', '8080x'])('login --port %s: rejected, saying 1024..65535', async (port) => {
    const r = await t.cli('login', '--port', port);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('1024..65535');
    expect(t.mock.requests).toHaveLength(0);
  });

  it.each(['', '   '])('tracker search stories --query %j is refused client-side', async (query) => {
    const r = await t.cli('tracker', 'search', 'stories', '--query', query);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--query: must not be empty');
    expect(t.mock.requests).toHaveLength(0);
  });

  it('tracker stories list: no such endpoint, so a pointer to what lists stories', async () => {
    const r = await t.cli('tracker', 'stories', 'list');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('tracker stories has no list');
    for (const way of ['opsctl tracker search stories --query TEXT', 'opsctl tracker epics stories ID', 'opsctl tracker iterations stories ID'])
      expect(r.stderr).toContain(way);
    expect(t.mock.requests).toHaveLength(0);
  });

  it('iterations create names every missing field, not "(and 2 more problems)"', async () => {
    const r = await t.cli('tracker', 'iterations', 'create');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('3 problems');
    for (const f of ['--name: is required', '--start-date: is required', '--end-date: is required']) expect(r.stderr).toContain(f);
    expect(r.stderr).not.toContain('more problem');
    expect(r.stderr).toContain('pass --name, --start-date and --end-date to create an iteration');
    expect(t.mock.requests).toHaveLength(0);
  });

  it('the article fits the noun: "an epic", "a label"', async () => {
    expect((await t.cli('tracker', 'epics', 'create')).stderr).toContain('to create an epic');
    expect((await t.cli('tracker', 'labels', 'create')).stderr).toContain('to create a label');
    expect((await t.cli('tracker', 'epics', 'create', '--help')).stdout).toContain('create an epic');
  });
});

describe('api -X', () => {
  it('takes the method in any case', async () => {
    const r = await t.cli('api', '/api/v3/labels', '--service', 'tracker', '-X', 'post', '-f', 'name=lowercase-method');
    expect(r.code, r.stderr).toBe(0);
    expect(t.mock.requests.at(-1)).toMatchObject({ method: 'POST', path: '/api/v3/labels' });
    const bad = await t.cli('api', '/api/v3/labels', '--service', 'tracker', '-X', 'fetch');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('GET, POST, PUT, PATCH, DELETE');
  });
});

describe('labels list --limit', () => {
  let mock: Awaited<ReturnType<typeof startMock>>;
  let env: NodeJS.ProcessEnv;
  const cfg = tempConfigDir();
  beforeAll(async () => {
    mock = await startMock({ services: ['labels'] });
    await mock.service('labels');
    env = { OPSCTL_CONFIG_DIR: cfg.dir, OPSCTL_LABELS_URL: mock.url, OPSCTL_ACCESS_TOKEN: await mintToken(mock) };
    for (const title of ['A', 'B', 'C']) expect((await runCli(['labels', 'create', '--title', title], { env })).code).toBe(0);
  });
  afterAll(async () => {
    await mock.close();
    cfg.cleanup();
  });

  it('says on stderr that more exist when it stops early, and not otherwise', async () => {
    const one = await runCli(['labels', 'list', '--limit', '1'], { env });
    expect(one.code).toBe(0);
    expect(one.stdout.trim().split('\n')).toHaveLength(1);
    expect(one.stderr).toContain('showing 1 label; more exist');
    const all = await runCli(['labels', 'list', '--limit', '3'], { env });
    expect(all.stdout.trim().split('\n')).toHaveLength(3);
    expect(all.stderr).not.toContain('more exist');
  });

  it('a 403 for a missing scope is refused authentication: exit 4', async () => {
    const ro = await mintToken(mock, { scopes: [LABEL_SCOPES.ro] });
    const r = await runCli(['labels', 'create', '--title', 'x'], { env: { ...env, OPSCTL_ACCESS_TOKEN: ro } });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('insufficient authentication scopes');
  });
});

describe('kv health', () => {
  it('the TOOK column has a unit', async () => {
    // A member as kv health reads it: its version, a status that knows a leader, a quorum read.
    const answers = new Map([
      ['/version', '{"etcdserver":"3.5.0","etcdcluster":"3.5.0"}'],
      ['/v3/maintenance/status', '{"header":{"member_id":"1","raft_term":"2"},"leader":"1","version":"3.5.0","dbSize":"4096"}'],
      ['/v3/kv/range', '{"header":{"revision":"1"},"count":"0"}'],
    ]);
    const server = createServer((req, res) => {
      req.resume();
      res.setHeader('content-type', 'application/json');
      res.end(answers.get(req.url ?? '') ?? '{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const r = await t.cli('kv', 'health', '--endpoints', url);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.trim().split('\t').at(-1)).toMatch(/^\d+ ms$/);
      const tty = await runCli(['kv', 'health', '--endpoints', url], { env: t.env, tty: true });
      expect(tty.stdout).toMatch(/TOOK/i);
      expect(tty.stdout).toMatch(/\d+ ms/);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
