import { ShortcutClient } from '@shortcut/client';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { startMock, trackerEnv } from '../helpers/mock.js';
import { SPEC_PATH } from '../helpers/shortcut-spec.js';

/**
 * The tracker mock's last seed gaps (issue 19, item 7), through the official @shortcut/client and the
 * built binary: the iteration and story-template switches take effect, the seeded objective lists its
 * key results (and `key-results list --objective NAME` finds them), entity templates answer the seed's
 * story_contents shape, and the mock serves its OpenAPI document to a generic client.
 */
let mock: Awaited<ReturnType<typeof startMock>>;
let sc: ShortcutClient;
let cfg: ReturnType<typeof tempConfigDir>;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  mock = await startMock({ services: ['tracker'] });
  sc = new ShortcutClient(mock.trackerToken, { baseURL: mock.url });
  cfg = tempConfigDir('opsctl-seed-');
  env = trackerEnv(mock, cfg.dir);
});
afterAll(async () => {
  await mock.close();
  cfg.cleanup();
});

describe('feature switches take effect', () => {
  it('iterations: while disabled, create and update answer 403 DisabledFeatureError; enabled again, they work', async () => {
    const made = (await sc.createIteration({ name: 'before', start_date: '2026-03-02', end_date: '2026-03-16' })).data;
    expect((await sc.disableIterations()).status).toBe(204);
    await expect(sc.createIteration({ name: 'while off', start_date: '2026-03-02', end_date: '2026-03-16' })).rejects.toMatchObject({
      response: { status: 403, data: { feature_tag: expect.any(String) } },
    });
    const cli = await runBin(['tracker', 'iterations', 'update', String(made.id), '--name', 'renamed'], { env });
    expect(cli.exitCode).toBe(1);
    expect(String(cli.stderr)).toContain('HTTP 403: iterations are turned off for this workspace (opsctl tracker iterations enable)');
    expect(String(cli.stderr)).toContain('the feature is turned off for this workspace');
    const on = await runBin(['tracker', 'iterations', 'enable'], { env });
    expect(on.exitCode, String(on.stderr)).toBe(0);
    expect((await sc.createIteration({ name: 'after', start_date: '2026-03-02', end_date: '2026-03-16' })).status).toBe(201);
  });

  it('story templates: while disabled, creating a template answers 403 DisabledFeatureError', async () => {
    expect((await sc.disableStoryTemplates()).status).toBe(204);
    await expect(sc.createEntityTemplate({ name: 'off', story_contents: { story_type: 'bug' } })).rejects.toMatchObject({
      response: { status: 403, data: { feature_tag: expect.any(String) } },
    });
    expect((await sc.enableStoryTemplates()).status).toBe(204);
    expect((await sc.createEntityTemplate({ name: 'on', story_contents: { story_type: 'bug' } })).status).toBe(201);
  });
});

describe('seeded objective and its key results', () => {
  it('the seeded objective lists both seeded key results, and each names it back', async () => {
    const objectives = (await sc.listObjectives()).data;
    const grow = objectives.find((o) => o.name === 'Grow adoption')!;
    expect(grow.key_result_ids).toHaveLength(2);
    for (const id of grow.key_result_ids) expect((await sc.getKeyResult(id)).data.objective_id).toBe(grow.id);
  });

  it('key-results list --objective NAME finds them (exact name, any case), and an unknown name exits 2', async () => {
    const r = await runBin(['tracker', 'key-results', 'list', '--objective', 'grow ADOPTION', '--json=name,type'], { env });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(JSON.parse(String(r.stdout))).toEqual([
      { name: 'Ship the new onboarding', type: 'boolean' },
      { name: 'Weekly active teams', type: 'numeric' },
    ]);
    const bad = await runBin(['tracker', 'key-results', 'list', '--objective', 'Grow'], { env });
    expect(bad.exitCode).toBe(2);
    expect(String(bad.stderr)).toContain('X --objective: no objective is named "Grow"');
    expect(String(bad.stderr)).toContain('"Grow adoption" (objective');
  });
});

describe("entity templates answer the seed's story_contents shape", () => {
  it('label ids and full labels, files and linked files, tasks with positions', async () => {
    const file = (await sc.createLinkedFile({ name: 'spec', type: 'url', url: 'https://example.com/spec' })).data;
    const { data: tpl } = await sc.createEntityTemplate({
      name: 'Bug report',
      story_contents: {
        story_type: 'bug',
        labels: [{ name: 'tpl-label', color: '#123456' }],
        linked_file_ids: [file.id],
        tasks: [{ description: 'Reproduce' }, { description: 'Fix', complete: true }],
      },
    });
    const got = (await sc.getEntityTemplate(tpl.id)).data.story_contents;
    expect(got.label_ids).toHaveLength(1);
    expect(got.labels).toMatchObject([{ id: got.label_ids![0], name: 'tpl-label', color: '#123456', entity_type: 'label' }]);
    expect(got.linked_files).toMatchObject([{ id: file.id, name: 'spec', url: 'https://example.com/spec' }]);
    expect(got.files).toEqual([]);
    expect(got.tasks).toEqual([
      { description: 'Reproduce', complete: false, owner_ids: [], position: 1 },
      { description: 'Fix', complete: true, owner_ids: [], position: 2 },
    ]);
    // a story made from it gets the label and the tasks
    const story = await runBin(['tracker', 'stories', 'from-template', '--story-template-id', tpl.id, '--name', 'Crash', '--json=label_ids,tasks'], { env });
    expect(story.exitCode, String(story.stderr)).toBe(0);
    const made = JSON.parse(String(story.stdout));
    expect(made.label_ids).toEqual(got.label_ids);
    expect(made.tasks.map((t: any) => t.description)).toEqual(['Reproduce', 'Fix']);
  });
});

describe('the mock serves its OpenAPI document', () => {
  it('GET /api/v3/openapi.json needs no token, is the reference contract, and points a generic client at the mock', async () => {
    const res = await fetch(`${mock.url}/api/v3/openapi.json`);
    expect(res.status).toBe(200);
    const doc = await res.json();
    const reference = JSON.parse(readFileSync(SPEC_PATH, 'utf8'));
    expect(doc.swagger).toBe('2.0');
    expect(Object.keys(doc.paths)).toEqual(Object.keys(reference.paths));
    expect(doc.definitions).toEqual(reference.definitions);
    expect(doc.host).toBe(new URL(mock.url).host);
    expect(doc.schemes).toEqual(['http']);
    // a generic client: the operation, its path, the auth header and the base URL, all from the document
    const [path, item] = Object.entries(doc.paths as Record<string, any>).find(([, ops]) => ops.get?.operationId === 'listLabels')!;
    const auth = doc.securityDefinitions.api_token;
    const url = `${doc.schemes[0]}://${doc.host}${doc.basePath === '/' ? '' : doc.basePath}${path}`;
    const labels = await fetch(url, { headers: { [auth.name]: mock.trackerToken } });
    expect(labels.status).toBe(200);
    expect(Array.isArray(await labels.json())).toBe(true);
    expect(item.get.responses['200']).toBeDefined();
  });
});

describe('the label mock answers users/<id>/capabilities for any known user', () => {
  it('me, another user by email or numeric id, and 404 for an unknown one (built binary, opsctl api)', async () => {
    const home = tempConfigDir('opsctl-caps-');
    const envL = { OPSCTL_CONFIG_DIR: home.dir };
    try {
      const login = await runBin(['login', '--consent-as', 'alice@example.com'], { env: envL });
      expect(login.exitCode, String(login.stderr)).toBe(0);
      const me = await runBin(['api', '/v2beta/users/me/capabilities', '--service', 'labels'], { env: envL });
      expect(JSON.parse(String(me.stdout))).toMatchObject({ name: 'users/me/capabilities', canCreateSharedLabels: true });
      const bob = await runBin(['api', '/v2beta/users/bob@example.com/capabilities', '--service', 'labels'], { env: envL });
      expect(bob.exitCode, String(bob.stderr)).toBe(0);
      expect(JSON.parse(String(bob.stdout))).toEqual({
        name: 'users/bob@example.com/capabilities',
        canAccessLabelManager: true,
        canAdministrateLabels: false,
        canCreateSharedLabels: true,
        canCreateAdminLabels: false,
      });
      const byId = await runBin(['api', '/v2beta/users/110000000000000000002/capabilities', '--service', 'labels'], { env: envL });
      expect(JSON.parse(String(byId.stdout)).name).toBe('users/110000000000000000002/capabilities');
      const nobody = await runBin(['api', '/v2beta/users/nobody@example.com/capabilities', '--service', 'labels'], { env: envL });
      expect(nobody.exitCode).toBe(1);
      expect(String(nobody.stderr)).toContain('HTTP 404: NOT_FOUND: users/nobody@example.com is not a known user');
    } finally {
      home.cleanup();
    }
  });
});
