import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli, tempConfigDir } from '../helpers/cli.js';
import { startMock, type TestState } from '../helpers/mock.js';
import { mintToken } from '../helpers/labels.js';

/** Labels are named by id, by labels/ID, or by exact title everywhere an id goes; unknown or shared titles exit 2 with the candidates. */
let mock: Awaited<ReturnType<typeof startMock>>;
let cfg: ReturnType<typeof tempConfigDir>;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  mock = await startMock({ services: ['labels'] });
  await mock.service('labels');
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
});
afterEach(() => cfg.cleanup());

const cli = (...argv: string[]) => runCli(argv, { env });
const create = async (title: string) => (await cli('labels', 'create', '--title', title, '--json')).json().id as string;
const writes = () => mock.requests.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path}`);

describe('labels by title', () => {
  it('get, change, publish and grant by exact title (then any case), with @revision; labels/ID needs no lookup', async () => {
    const id = await create('Sensitivity');
    const other = await create('Data class');
    const r = await cli('labels', 'get', 'Sensitivity', '--json');
    expect(r.code).toBe(0);
    expect(r.json().id).toBe(id);
    expect((await cli('labels', 'get', 'Data class', '--json')).json().id).toBe(other);
    expect((await cli('labels', 'get', 'sensitivity', '--json')).json().id).toBe(id);

    expect((await cli('labels', 'fields', 'add', 'Sensitivity', '--name', 'Level', '--type', 'text')).code).toBe(0);
    expect((await cli('labels', 'publish', 'Sensitivity')).code).toBe(0);
    expect((await cli('labels', 'get', 'Sensitivity@published', '--json')).json()).toMatchObject({ id, name: `labels/${id}@3` });
    mock.requests.length = 0;
    expect((await cli('labels', 'permissions', 'add', 'Data class', 'bob@example.com=READER')).code).toBe(0);
    expect(writes()).toEqual([`POST /v2/labels/${other}/permissions`]);
    expect((await cli('labels', 'locks', 'Sensitivity')).code).toBe(0);
    expect((await cli('labels', 'copy-mode', 'Sensitivity', 'always-copy')).code).toBe(0);

    mock.requests.length = 0;
    expect((await cli('labels', 'get', `labels/${id}`)).code).toBe(0);
    expect(mock.requests.map((q) => q.path)).toEqual([`/v2/labels/${id}`]);
    // a bare id is looked up once too (it might be a title), then used
    mock.requests.length = 0;
    expect((await cli('labels', 'get', id, '--json')).json().id).toBe(id);
    expect(mock.requests.map((q) => q.path)).toEqual(['/v2/labels', `/v2/labels/${id}`]);
  });

  it('an unknown title exits 2 naming the candidates; a shared title exits 2 naming each id; nothing is sent', async () => {
    const a = await create('Dup');
    const b = await create('Dup');
    await create('Sensitivity');
    mock.requests.length = 0;
    const unknown = await cli('labels', 'publish', 'Sensitivty');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no label has the id or title "Sensitivty"');
    expect(unknown.stderr).toContain('"Sensitivity" (');
    const shared = await cli('labels', 'delete', 'Dup', '--yes');
    expect(shared.code).toBe(2);
    expect(shared.stderr).toContain('"Dup" is the title of 2 labels');
    expect(shared.stderr).toContain(a);
    expect(shared.stderr).toContain(b);
    const json = await cli('labels', 'get', 'Dup', '--json');
    expect(JSON.parse(json.stderr).error).toMatchObject({ code: 'ambiguous_name', field: 'label' });
    expect(writes()).toEqual([]);
    // the id settles it
    expect((await cli('labels', 'get', a, '--json')).json().id).toBe(a);
  });
});

describe('labels permissions update: PATCH …/permissions on a label and a revision', () => {
  it('creates or changes a role with one PATCH per grant, by title, on the label and with --revision', async () => {
    const id = await create('Perms');
    mock.requests.length = 0;
    let r = await cli('labels', 'permissions', 'update', 'Perms', 'bob@example.com=READER', '--json');
    expect(r.code).toBe(0);
    expect(r.json()).toEqual([{ name: `labels/${id}/permissions/1`, role: 'READER', email: 'bob@example.com' }]);
    r = await cli('labels', 'permissions', 'update', id, 'bob@example.com=editor', 'audiences/default=APPLIER');
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`labels/${id}: updated bob@example.com=EDITOR, audiences/default=APPLIER`);
    r = await cli('labels', 'permissions', 'update', `labels/${id}`, 'carol@example.com=ORGANIZER', '--revision', '1');
    expect(r.code).toBe(0);
    expect(writes()).toEqual([
      `PATCH /v2/labels/${id}/permissions`,
      `PATCH /v2/labels/${id}/permissions`,
      `PATCH /v2/labels/${id}/permissions`,
      `PATCH /v2/labels/${id}/revisions/1/permissions`,
    ]);
    const listed = (await cli('labels', 'permissions', 'list', 'Perms', '--json')).json();
    expect(listed.map((p: { role: string }) => p.role)).toEqual(['EDITOR', 'APPLIER', 'ORGANIZER']);
    // a bad grant or revision is refused before anything is sent
    mock.requests.length = 0;
    expect((await cli('labels', 'permissions', 'update', 'Perms', 'bob@example.com=OWNER')).code).toBe(2);
    expect((await cli('labels', 'permissions', 'update', 'Perms', 'bob@example.com=READER', '--revision', '1/2')).code).toBe(2);
    expect(mock.requests).toEqual([]);
  });
});
