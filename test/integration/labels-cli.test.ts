import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli, tempConfigDir } from '../helpers/cli.js';
import { startMock, type TestState } from '../helpers/mock.js';
import { LABEL_SCOPES, mintToken } from '../helpers/labels.js';

let mock: Awaited<ReturnType<typeof startMock>>;
let cfg: ReturnType<typeof tempConfigDir>;
let env: NodeJS.ProcessEnv;
let token: string;

beforeAll(async () => {
  mock = await startMock({ services: ['labels'] });
  await mock.service('labels');
  token = await mintToken(mock);
});
afterAll(async () => {
  await mock.close();
});
beforeEach(async () => {
  cfg = tempConfigDir();
  env = { OPSCTL_CONFIG_DIR: cfg.dir, OPSCTL_LABELS_URL: mock.url, OPSCTL_ACCESS_TOKEN: token };
  await mock.store.write((s: TestState) => {
    s.labels.labels = [];
  });
  mock.requests.length = 0;
});
afterEach(() => cfg.cleanup());

const cli = (...argv: string[]) => runCli(argv, { env });
const writes = () => mock.requests.filter((r) => r.method !== 'GET');

describe('opsctl labels: the lifecycle from the command line', () => {
  it('create → fields/choices → publish → change → publish → disable → enable → disable → delete', async () => {
    const created = await cli('labels', 'create', '--title', 'Sensitivity', '--description', 'How secret', '--json');
    expect(created.code).toBe(0);
    const id = created.json().id as string;
    expect(created.json().lifecycle.state).toBe('UNPUBLISHED_DRAFT');

    let r = await cli('labels', 'fields', 'add', id, '--name', 'Level', '--type', 'selection', '--choices', 'Low,High');
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('added field "Level"');
    expect(r.stderr).toContain('revision 2; unpublished changes wait');
    r = await cli('labels', 'fields', 'add', `labels/${id}`, '--name', 'Owner', '--type', 'user', '--list', '3', '--before', 'Level');
    expect(r.code).toBe(0);
    r = await cli('labels', 'choices', 'add', id, 'Level', '--name', 'Medium', '--before', 'High');
    expect(r.code).toBe(0);

    const listed = await cli('labels', 'list');
    expect(listed.stdout.trim().split('\t')).toEqual([id, 'Sensitivity', 'UNPUBLISHED_DRAFT', '4', 'yes', '2', 'SHARED']);

    r = await cli('labels', 'publish', id);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/published labels\/\w+: PUBLISHED, revision 5$/m);

    r = await cli('labels', 'choices', 'update', id, 'Level', 'Low', '--name', 'Minor', '--description', 'meh');
    expect(r.code).toBe(0);
    r = await cli('labels', 'fields', 'update', id, 'Owner', '--required');
    expect(r.code).toBe(0);
    const tty = await runCli(['labels', 'list'], { env, tty: true });
    expect(tty.stdout).toMatch(/ID\s+TITLE\s+STATE\s+REVISION\s+UNPUBLISHED CHANGES\s+FIELDS\s+TYPE/);
    expect(tty.stdout).toMatch(/Sensitivity\s+PUBLISHED\s+7\s+yes/);

    const got = await cli('labels', 'get', id);
    expect(got.stdout).toContain(`name\tlabels/${id}`);
    expect(got.stdout).toContain('fields\tOwner (');
    expect(got.stdout).toContain('Minor, Medium, High');
    expect((await cli('labels', 'get', `labels/${id}@published`, '--json')).json().fields[1].selectionOptions.choices[0].properties.displayName).toBe('Low');

    expect((await cli('labels', 'publish', id)).code).toBe(0);
    expect((await cli('labels', 'delete', id, '--yes')).code).toBe(1);
    r = await cli('labels', 'disable', id, '--hide-in-search');
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('DISABLED');
    expect((await cli('labels', 'enable', id)).code).toBe(0);
    expect((await cli('labels', 'disable', id)).code).toBe(0);
    r = await cli('labels', 'delete', id, '--yes');
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`deleted labels/${id}`);
    expect((await cli('labels', 'list', '--json')).json()).toEqual([]);
  });

  it('refuses to delete a published label with the server reason, and asks before deleting', async () => {
    const id = (await cli('labels', 'create', '--title', 'Live', '--json')).json().id;
    await cli('labels', 'publish', id);
    const r = await cli('labels', 'delete', id, '--yes');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('FAILED_PRECONDITION');
    expect(r.stderr).toContain('disable it before deleting');
    const noYes = await cli('labels', 'delete', id);
    expect(noYes.code).toBe(2);
    expect(noYes.stderr).toContain('--yes');
  });

  it('fields and choices: enable, disable, delete, with names or ids', async () => {
    const id = (await cli('labels', 'create', '--title', 'F', '--json')).json().id;
    await cli('labels', 'fields', 'add', id, '--name', 'Due', '--type', 'date', '--date-format', 'SHORT_DATE');
    await cli('labels', 'fields', 'add', id, '--name', 'Kind', '--type', 'selection', '--choices', 'A,B');
    await cli('labels', 'publish', id);
    expect((await cli('labels', 'fields', 'delete', id, 'Due', '--yes')).stderr).toContain('disable it before deleting');
    expect((await cli('labels', 'fields', 'disable', id, 'Due', '--show-in-apply')).code).toBe(0);
    expect((await cli('labels', 'fields', 'enable', id, 'Due')).code).toBe(0);
    expect((await cli('labels', 'fields', 'disable', id, 'Due')).code).toBe(0);
    expect((await cli('labels', 'fields', 'delete', id, 'Due', '--yes')).code).toBe(0);
    expect((await cli('labels', 'choices', 'disable', id, 'Kind', 'A')).code).toBe(0);
    expect((await cli('labels', 'choices', 'enable', id, 'Kind', 'A')).code).toBe(0);
    expect((await cli('labels', 'choices', 'disable', id, 'Kind', 'B')).code).toBe(0);
    expect((await cli('labels', 'choices', 'delete', id, 'Kind', 'B', '--yes')).code).toBe(0);
    const label = (await cli('labels', 'get', id, '--json')).json();
    expect(label.fields.map((f: any) => f.properties.displayName)).toEqual(['Kind']);
    expect(label.fields[0].selectionOptions.choices.map((c: any) => c.properties.displayName)).toEqual(['A']);
    const missing = await cli('labels', 'fields', 'enable', id, 'Nope');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('has no field "Nope"');
    expect(missing.stderr).toContain('Kind (');
  });

  it('copy mode, apps, locks, limits and capabilities', async () => {
    const id = (await cli('labels', 'create', '--title', 'Misc', '--json')).json().id;
    let r = await cli('labels', 'copy-mode', id, 'always-copy');
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('copy mode ALWAYS_COPY');
    const before = mock.requests.length;
    r = await cli('labels', 'copy-mode', id, 'sometimes');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('do-not-copy, always-copy or copy-appliable');
    expect(mock.requests).toHaveLength(before);
    r = await cli('labels', 'apps', id, 'drive', 'GMAIL');
    expect(r.stderr).toContain('enabled apps DRIVE, GMAIL');
    expect((await cli('labels', 'apps', id, 'slack')).code).toBe(2);
    expect((await cli('labels', 'locks', id, '--json')).json()).toEqual([]);
    expect((await cli('labels', 'locks', id, '--revision', '1')).code).toBe(0);
    const limits = await cli('labels', 'limits');
    expect(limits.stdout).toContain('maxFields\t10');
    expect(limits.stdout).toContain('selection maxChoices\t200');
    const caps = await cli('labels', 'capabilities', '--json');
    expect(caps.json()).toMatchObject({ name: 'users/me/capabilities', canCreateSharedLabels: true });
  });

  it('lists every page (pageSize 200) and honours --limit and --published-only', async () => {
    await mock.store.write((s: TestState) => {
      for (let i = 0; i < 205; i++) {
        s.labels.labels.push({
          id: `bulk${i}`,
          labelType: 'SHARED',
          createTime: '2026-01-01T00:00:00Z',
          creator: 'people/ada',
          creatorEmail: 'ada@example.com',
          state: 'UNPUBLISHED_DRAFT',
          revSeq: 1,
          revisions: [
            {
              revisionId: '1',
              createTime: '2026-01-01T00:00:00Z',
              creator: 'people/ada',
              published: false,
              content: {
                properties: { title: `Bulk ${i}` },
                life: {
                  state: 'UNPUBLISHED_DRAFT',
                  everPublished: false,
                  hasUnpublishedChanges: true,
                  createTime: '',
                  creator: '',
                  updateTime: '',
                  updater: '',
                },
                fields: [],
              },
            },
          ],
          copyMode: 'DO_NOT_COPY',
          permSeq: 0,
          permissions: [],
          locks: [],
        });
      }
    });
    const all = await cli('labels', 'list', '--json=id');
    expect(all.json()).toHaveLength(205);
    expect(mock.requests.filter((r) => r.path === '/v2/labels')).toHaveLength(2);
    expect((await cli('labels', 'list', '--limit', '3', '--json=id')).json()).toHaveLength(3);
    expect((await cli('labels', 'list', '--published-only', '--json')).json()).toEqual([]);
    expect((await cli('labels', 'list', '--limit', 'x')).code).toBe(2);
  });
});

describe('permissions from the command line', () => {
  it('add, batch add, list, set, remove, on a label and a revision', async () => {
    const id = (await cli('labels', 'create', '--title', 'P', '--json')).json().id;
    let r = await cli('labels', 'permissions', 'add', id, 'bob@example.com=reader');
    expect(r.code).toBe(0);
    expect(mock.requests.at(-1)).toMatchObject({ method: 'POST', path: `/v2/labels/${id}/permissions` });
    r = await cli('labels', 'permissions', 'add', id, 'carol@example.com=EDITOR', 'audiences/default=APPLIER');
    expect(r.code).toBe(0);
    expect(mock.requests.at(-1)).toMatchObject({ method: 'POST', path: `/v2/labels/${id}/permissions:batchUpdate` });
    r = await cli('labels', 'permissions', 'list', id);
    expect(
      r.stdout
        .trim()
        .split('\n')
        .map((l) => l.split('\t').slice(0, 2)),
    ).toEqual([
      ['bob@example.com', 'READER'],
      ['carol@example.com', 'EDITOR'],
      ['audiences/default', 'APPLIER'],
    ]);
    mock.requests.length = 0;
    r = await cli('labels', 'permissions', 'set', id, 'bob@example.com=EDITOR', 'dan@example.com=READER', 'audiences/default=APPLIER', '--yes');
    expect(r.code).toBe(0);
    expect(writes().map((w) => w.path.split('/').pop())).toEqual(['permissions:batchUpdate', 'permissions:batchDelete']);
    mock.requests.length = 0;
    r = await cli('labels', 'permissions', 'set', id, 'bob@example.com=EDITOR', 'dan@example.com=READER', 'audiences/default=APPLIER');
    expect(r.stderr).toContain('nothing sent');
    expect(writes()).toHaveLength(0);

    r = await cli('labels', 'permissions', 'remove', id, 'dan@example.com', 'audiences/default', '--yes');
    expect(r.code).toBe(0);
    expect(writes().at(-1)?.path).toBe(`/v2/labels/${id}/permissions:batchDelete`);
    r = await cli('labels', 'permissions', 'remove', id, 'bob@example.com', '--yes');
    expect(writes().at(-1)).toMatchObject({ method: 'DELETE' });

    r = await cli('labels', 'permissions', 'add', id, '--revision', '1', 'erin@example.com=READER', 'fay@example.com=READER');
    expect(r.code).toBe(0);
    expect(writes().at(-1)?.path).toBe(`/v2/labels/${id}/revisions/1/permissions:batchUpdate`);
    const revList = await cli('labels', 'permissions', 'list', `labels/${id}@1`, '--json');
    expect(revList.json().map((p: any) => p.name)).toEqual([`labels/${id}/revisions/1/permissions/5`, `labels/${id}/revisions/1/permissions/6`]);
    // the revision's own resource name works too
    expect((await cli('labels', 'permissions', 'list', `labels/${id}/revisions/1`, '--json')).json()).toHaveLength(2);
    r = await cli('labels', 'permissions', 'remove', id, '--revision', '1', 'erin@example.com', 'fay@example.com', '--yes');
    expect(writes().at(-1)?.path).toBe(`/v2/labels/${id}/revisions/1/permissions:batchDelete`);
    expect((await cli('labels', 'permissions', 'list', id, '--json')).json()).toEqual([]);
  });

  it('set: a removal that fails after the grants went through exits 3 and says what was done; a re-run finishes it', async () => {
    const id = (await cli('labels', 'create', '--title', 'P', '--json')).json().id;
    expect((await cli('labels', 'permissions', 'add', id, 'bob@example.com=READER', 'carol@example.com=READER')).code).toBe(0);
    mock.inject({ service: 'labels', method: 'POST', path: `/v2/labels/${id}/permissions:batchDelete`, status: 400, message: 'injected refusal' });
    const r = await cli('labels', 'permissions', 'set', id, 'bob@example.com=EDITOR', 'dan@example.com=READER', '--yes');
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('granted or changed 2, then removing 1 failed');
    expect(r.stderr).toContain('run the same set again');
    mock.requests.length = 0;
    expect((await cli('labels', 'permissions', 'set', id, 'bob@example.com=EDITOR', 'dan@example.com=READER', '--yes')).code).toBe(0);
    expect(writes().map((w) => w.path.split('/').pop())).toEqual(['permissions:batchDelete']);
    const after = (await cli('labels', 'permissions', 'list', id, '--json')).json();
    expect(after.map((p: any) => `${p.email}=${p.role}`)).toEqual(['bob@example.com=EDITOR', 'dan@example.com=READER']);
  });

  it('set with no grants removes everything only when confirmed (--yes without a terminal)', async () => {
    const id = (await cli('labels', 'create', '--title', 'P', '--json')).json().id;
    expect((await cli('labels', 'permissions', 'add', id, 'bob@example.com=READER')).code).toBe(0);
    mock.requests.length = 0;
    const refused = await cli('labels', 'permissions', 'set', id);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--yes');
    expect(writes()).toEqual([]);
    expect((await cli('labels', 'permissions', 'set', id, '--yes')).code).toBe(0);
    expect(writes().map((w) => w.path.split('/').pop())).toEqual(['permissions:batchDelete']);
  });

  it('rejects bad grants before sending', async () => {
    const id = (await cli('labels', 'create', '--title', 'P', '--json')).json().id;
    mock.requests.length = 0;
    for (const bad of ['bob@example.com', 'bob@example.com=OWNER', 'bob=READER']) {
      const r = await cli('labels', 'permissions', 'add', id, bad);
      expect(r.code).toBe(2);
    }
    expect((await cli('labels', 'permissions', 'add', id, 'a@example.com=READER', 'A@example.com=EDITOR')).stderr).toContain('given twice');
    expect((await cli('labels', 'permissions', 'list', id, '--revision', 'x-y')).code).toBe(2);
    expect(mock.requests).toHaveLength(0);
  });
});

describe('admin labels from the command line', () => {
  it('--admin reads and changes an ADMIN label with useAdminAccess; without it the refusal says to add --admin', async () => {
    const root = await mintToken(mock, { email: 'root@example.com', scopes: [LABEL_SCOPES.admin] });
    const adminEnv = { ...env, OPSCTL_ACCESS_TOKEN: root };
    const as = (...argv: string[]) => runCli(argv, { env: adminEnv });
    const created = await as('labels', 'create', '--title', 'Legal hold', '--type', 'admin', '--json');
    expect(created.code).toBe(0);
    const id = created.json().id as string;

    const refused = await as('labels', 'fields', 'add', id, '--name', 'Case', '--type', 'text');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('PERMISSION_DENIED');
    expect(refused.stderr).toContain('add --admin');

    mock.requests.length = 0;
    const steps: string[][] = [
      ['labels', 'get', id, '--admin'],
      ['labels', 'fields', 'add', id, '--name', 'Case', '--type', 'selection', '--choices', 'Open,Closed', '--admin'],
      ['labels', 'choices', 'update', id, 'Case', 'Open', '--name', 'Active', '--admin'],
      ['labels', 'publish', id, '--admin'],
      ['labels', 'copy-mode', id, 'always-copy', '--admin'],
      ['labels', 'apps', id, 'drive', '--admin'],
      ['labels', 'permissions', 'add', id, 'counsel@example.com=READER', '--admin'],
      ['labels', 'permissions', 'list', id, '--admin'],
      ['labels', 'disable', id, '--admin'],
      ['labels', 'enable', id, '--admin'],
      ['labels', 'disable', id, '--admin'],
      ['labels', 'delete', id, '--yes', '--admin'],
    ];
    for (const argv of steps) {
      const r = await as(...argv);
      expect(r.code, `${argv.join(' ')}: ${r.stderr}`).toBe(0);
    }
    expect(mock.requests.every((r) => r.status === 200)).toBe(true);
    // every request but the body-carrying verbs says useAdminAccess=true in its query; the verbs carry it in the body
    const verbs = /:(delta|publish|disable|enable|updateLabelCopyMode|updateLabelEnabledAppSettings)$/;
    expect(mock.requests.filter((r) => !verbs.test(r.path)).every((r) => r.query.includes('useAdminAccess=true'))).toBe(true);
    expect((await as('labels', 'list', '--admin')).stdout).toBe('');
    // without the admin scope, --admin (or --type admin) is refused with the way to get the scope (a missing scope: exit 4)
    const plain = await cli('labels', 'create', '--title', 'Nope', '--type', 'admin');
    expect(plain.code).toBe(4);
    expect(plain.stderr).toContain('opsctl login --scopes openid email drive.labels drive.admin.labels');
    expect(plain.stderr).not.toContain('add --admin');
  });
});

describe('ids, auth and errors', () => {
  it('refuses a malformed id before sending, and a write to a revision name', async () => {
    const r = await cli('labels', 'get', 'labels/a b');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('not a label id or name');
    expect((await cli('labels', 'publish', 'labels/abc@3')).stderr).toContain('not to revision @3');
    expect(mock.requests).toHaveLength(0);
  });

  it('exits 4 on 401 and names the fix; 403 for a read-only token on a write', async () => {
    const none = await runCli(['labels', 'list'], { env: { ...env, OPSCTL_ACCESS_TOKEN: 'ya29.nope' } });
    expect(none.code).toBe(4);
    expect(none.stderr).toContain('UNAUTHENTICATED');
    expect(none.stderr).toContain('sign in: opsctl login');
    const unset = await runCli(['labels', 'list'], { env: { OPSCTL_CONFIG_DIR: cfg.dir, OPSCTL_LABELS_URL: mock.url } });
    expect(unset.code).toBe(4);
    expect(unset.stderr).toContain('opsctl login');
    const ro = await mintToken(mock, { scopes: [LABEL_SCOPES.ro] });
    const roEnv = { ...env, OPSCTL_ACCESS_TOKEN: ro };
    expect((await runCli(['labels', 'list'], { env: roEnv })).code).toBe(0);
    const w = await runCli(['labels', 'create', '--title', 'x'], { env: roEnv });
    expect(w.code).toBe(4);
    expect(w.stderr).toContain('PERMISSION_DENIED');
  });
});

describe('the token of opsctl login', () => {
  it('is sent to the label service and refreshed first when it is about to expire', async () => {
    const own = await startMock({ services: ['oauth', 'labels'], options: { oauth: { accessTokenTtlSeconds: 120 } } });
    const dir = tempConfigDir();
    try {
      const loginEnv = { OPSCTL_CONFIG_DIR: dir.dir, OPSCTL_AUTH_URL: own.url, OPSCTL_LABELS_URL: own.url };
      const login = await runCli(['login', '--consent-as', 'alice@example.com', '--scopes', 'openid', 'email', 'drive.labels'], { env: loginEnv });
      expect(login.code, login.stderr).toBe(0);
      own.requests.length = 0;
      // 120 s of life is under the 5-minute margin: the next command refreshes, then calls the service
      const r = await runCli(['labels', 'create', '--title', 'Fresh', '--json'], { env: loginEnv });
      expect(r.code, r.stderr).toBe(0);
      // the refreshed ID token is checked against the local server's keys (its metadata is not cached: a local mock's port changes)
      expect(own.requests.map((q) => `${q.method} ${q.path} ${q.status}`)).toEqual([
        'POST /token 200',
        'GET /.well-known/openid-configuration 200',
        'GET /oauth2/v3/certs 200',
        'POST /v2/labels 200',
      ]);
      expect(r.json().creator.person).toMatch(/^people\//);
    } finally {
      dir.cleanup();
      await own.close();
    }
  });

  it('refused as expired by a service whose clock runs ahead: refreshed once, and the write sent again (made once)', async () => {
    let offset = 0;
    const own = await startMock({ services: ['oauth', 'labels'], now: () => Date.now() + offset, options: { oauth: { accessTokenTtlSeconds: 3600 } } });
    const dir = tempConfigDir();
    try {
      const loginEnv = { OPSCTL_CONFIG_DIR: dir.dir, OPSCTL_AUTH_URL: own.url, OPSCTL_LABELS_URL: own.url };
      const login = await runCli(['login', '--consent-as', 'alice@example.com', '--scopes', 'openid', 'email', 'drive.labels'], { env: loginEnv });
      expect(login.code, login.stderr).toBe(0);
      offset = 3_700_000;
      own.requests.length = 0;
      const r = await runCli(['labels', 'create', '--title', 'Skewed', '--json'], { env: loginEnv });
      expect(r.code, r.stderr).toBe(0);
      expect(own.requests.map((q) => `${q.method} ${q.path} ${q.status}`).filter((l) => !l.includes('/.well-known/') && !l.includes('/certs'))).toEqual([
        'POST /v2/labels 401',
        'POST /token 200',
        'POST /v2/labels 200',
      ]);
      const listed = await runCli(['labels', 'list', '--json'], { env: loginEnv });
      expect(listed.json().filter((l: { properties: { title: string } }) => l.properties.title === 'Skewed')).toHaveLength(1);
    } finally {
      dir.cleanup();
      await own.close();
    }
  });
});
