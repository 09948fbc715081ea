import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli, tempConfigDir } from '../helpers/cli.js';
import { startMock, type TestState } from '../helpers/mock.js';
import { labelsApi, mintToken, type Api } from '../helpers/labels.js';
import { METHODS } from '../../src/labels/schema.js';
import { contractOf } from '@opsctl/mock/services/labels/contract.js';

/**
 * The label service speaks v2 (Google's current API, opsctl's default) and v2beta (a profile setting),
 * both checked against their discovery documents: an unknown JSON field or query parameter gets Google's
 * 400 INVALID_ARGUMENT ("Invalid JSON payload received. Unknown name …", with a BadRequest detail).
 */
let mock: Awaited<ReturnType<typeof startMock>>;
let api: Api;
let cfg: ReturnType<typeof tempConfigDir>;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  mock = await startMock({ services: ['labels'] });
  await mock.service('labels');
  api = labelsApi(mock, await mintToken(mock));
  env = { OPSCTL_ACCESS_TOKEN: await mintToken(mock), OPSCTL_LABELS_URL: mock.url };
});
afterAll(async () => {
  await mock.close();
});
beforeEach(async () => {
  cfg = tempConfigDir();
  env.OPSCTL_CONFIG_DIR = cfg.dir;
  await mock.store.write((s: TestState) => {
    s.labels.labels = [];
  });
  mock.requests.length = 0;
});
afterEach(() => cfg.cleanup());

const cli = (...argv: string[]) => runCli(argv, { env });

describe('the label mock serves v2 and v2beta from their discovery documents', () => {
  it('answers the same methods under /v2 and /v2beta, and serves both documents', async () => {
    for (const v of ['v2', 'v2beta']) {
      const created = await api('POST', `/${v}/labels`, { labelType: 'SHARED', properties: { title: `T ${v}` } });
      expect(created.status).toBe(200);
      const got = await api('GET', `/${v}/${created.body.name}?view=LABEL_VIEW_FULL`);
      expect(got.body).toMatchObject({ name: created.body.name, properties: { title: `T ${v}` } });
      const doc = await api('GET', `/$discovery/rest?version=${v}`, undefined, null);
      expect(doc.body).toMatchObject({ id: `drivelabels:${v}`, version: v, rootUrl: `${mock.url}/` });
    }
    expect((await api('GET', '/$discovery/rest?version=v1', undefined, null)).status).toBe(404);
  });

  it('refuses an unknown JSON field, at the top or nested, with Google 400 INVALID_ARGUMENT', async () => {
    for (const v of ['v2', 'v2beta']) {
      const top = await api('POST', `/${v}/labels`, { labelType: 'SHARED', properties: { title: 'x' }, colour: 'red' });
      expect(top.status).toBe(400);
      expect(top.body.error).toEqual({
        code: 400,
        status: 'INVALID_ARGUMENT',
        message: 'Invalid JSON payload received. Unknown name "colour": Cannot find field.',
        details: [
          {
            '@type': 'type.googleapis.com/google.rpc.BadRequest',
            fieldViolations: [{ field: 'colour', description: 'Invalid JSON payload received. Unknown name "colour": Cannot find field.' }],
          },
        ],
      });
      const nested = await api('POST', `/${v}/labels`, { labelType: 'SHARED', properties: { title: 'x', subtitle: 'y' } });
      expect(nested.status).toBe(400);
      expect(nested.body.error.message).toBe(`Invalid JSON payload received. Unknown name "subtitle" at 'properties': Cannot find field.`);
      const created = (await api('POST', `/${v}/labels`, { labelType: 'SHARED', properties: { title: 'ok' } })).body;
      const deep = await api('POST', `/${v}/${created.name}:delta`, {
        requests: [{ createField: { field: { properties: { displayName: 'F', colour: 1 }, textOptions: {} } } }],
      });
      expect(deep.status).toBe(400);
      expect(deep.body.error.message).toBe(
        `Invalid JSON payload received. Unknown name "colour" at 'requests[0].createField.field.properties': Cannot find field.`,
      );
      // nothing was applied
      expect((await api('GET', `/${v}/${created.name}?view=LABEL_VIEW_FULL`)).body.revisionId).toBe('1');
    }
  });

  it('refuses an unknown query parameter; accepts the declared ones, the system ones and proto (snake_case) names', async () => {
    for (const v of ['v2', 'v2beta']) {
      const bad = await api('GET', `/${v}/labels?view=LABEL_VIEW_FULL&colour=red`);
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatchObject({
        status: 'INVALID_ARGUMENT',
        message: `Invalid JSON payload received. Unknown name "colour": Cannot bind query parameter. Field 'colour' could not be found in request message.`,
      });
      // a parameter of another method is unknown here too
      expect((await api('GET', `/${v}/limits/label?view=LABEL_VIEW_FULL`)).status).toBe(400);
      expect((await api('GET', `/${v}/labels?view=LABEL_VIEW_FULL&publishedOnly=false&pageSize=5&prettyPrint=false&alt=json&fields=labels`)).status).toBe(200);
      const snake = await api('POST', `/${v}/labels`, { label_type: 'SHARED', properties: { title: 'snake' }, learn_more_uri: 'https://example.com/x' });
      expect(snake.status).toBe(200);
      expect(snake.body).toMatchObject({ labelType: 'SHARED', learnMoreUri: 'https://example.com/x' });
    }
  });
});

describe('the one label table', () => {
  it('matches both documents: every method with its verb, path and parameters under each version', async () => {
    for (const v of ['v2', 'v2beta'] as const) {
      const c = await contractOf(v);
      expect([...c.methods.keys()].sort()).toEqual(Object.keys(METHODS).sort());
      for (const [id, row] of Object.entries(METHODS)) {
        const m = c.methods.get(id) as any;
        expect({ id, http: m.httpMethod, path: m.flatPath, params: Object.keys(m.parameters ?? {}).sort() }).toEqual({
          id,
          http: row.http,
          path: `${v}/${row.path}`,
          params: [...row.params].sort(),
        });
      }
    }
  });
});

describe('opsctl speaks v2 by default and v2beta when the profile says so', () => {
  it('sends /v2 paths by default, /v2beta with labels_version v2beta; a bad version is refused', async () => {
    expect((await cli('labels', 'create', '--title', 'Versioned')).code).toBe(0);
    expect((await cli('labels', 'list')).code).toBe(0);
    expect(mock.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v2/labels', 'GET /v2/labels']);

    expect((await cli('config', 'set', 'labels_version', 'v2beta')).code).toBe(0);
    mock.requests.length = 0;
    const listed = await cli('labels', 'list', '--json');
    expect(listed.code).toBe(0);
    expect(listed.json()[0].properties.title).toBe('Versioned');
    expect(mock.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v2beta/labels']);

    const bad = await cli('config', 'set', 'labels_version', 'v3');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('labels_version');
    expect(bad.stderr).toContain('v2, v2beta');
  });
});
