import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startMock, type TestState } from '../helpers/mock.js';
import { LABEL_SCOPES, labelsApi, mintToken, type Api } from '../helpers/labels.js';

let mock: Awaited<ReturnType<typeof startMock>>;
let api: Api;
let token: string;

beforeAll(async () => {
  mock = await startMock({ services: ['labels'], options: { labels: { maxFields: 4, maxChoices: 3 } } });
  await mock.service('labels');
  token = await mintToken(mock);
  api = labelsApi(mock, token);
});
afterAll(async () => {
  await mock.close();
});
beforeEach(async () => {
  await mock.store.write((s: TestState) => {
    s.labels.labels = [];
  });
});

const create = async (title = 'Sensitivity', extra: Record<string, unknown> = {}) => {
  const r = await api('POST', '/v2beta/labels', { labelType: 'SHARED', properties: { title }, ...extra });
  expect(r.status).toBe(200);
  return r.body;
};

function expectError(r: { status: number; body: any }, status: number, googleStatus: string, text?: RegExp | string) {
  expect(r.status).toBe(status);
  expect(r.body.error).toMatchObject({ code: status, status: googleStatus });
  expect(typeof r.body.error.message).toBe('string');
  if (text) expect(r.body.error.message).toMatch(text);
}

describe('label lifecycle', () => {
  it('create → delta → publish → delta → publish → disable → enable → disable → delete', async () => {
    const label = await create();
    expect(label).toMatchObject({
      name: `labels/${label.id}`,
      revisionId: '1',
      labelType: 'SHARED',
      lifecycle: { state: 'UNPUBLISHED_DRAFT', hasUnpublishedChanges: true },
    });
    const id = label.id;

    const d1 = await api('POST', `/v2beta/labels/${id}:delta`, {
      writeControl: { requiredRevisionId: '1' },
      view: 'LABEL_VIEW_FULL',
      requests: [
        { updateLabel: { properties: { title: 'Sensitivity', description: 'How secret' }, updateMask: 'description' } },
        {
          createField: {
            field: {
              properties: { displayName: 'Level' },
              selectionOptions: { choices: [{ properties: { displayName: 'Low' } }, { properties: { displayName: 'High' } }] },
            },
          },
        },
        { createField: { field: { id: 'owner', properties: { displayName: 'Owner' }, userOptions: {} } } },
      ],
    });
    expect(d1.status).toBe(200);
    expect(d1.body.responses).toHaveLength(3);
    expect(d1.body.responses[0]).toEqual({ updateLabel: {} });
    expect(d1.body.responses[1].createField).toMatchObject({ priority: 1 });
    expect(d1.body.responses[2].createField).toEqual({ id: 'owner', priority: 2 });
    expect(d1.body.updatedLabel).toMatchObject({ revisionId: '2', properties: { description: 'How secret' } });
    expect(d1.body.updatedLabel.fields[0].selectionOptions.choices).toHaveLength(2);

    const p1 = await api('POST', `/v2beta/labels/${id}:publish`, { writeControl: { requiredRevisionId: '2' } });
    expect(p1.status).toBe(200);
    expect(p1.body.lifecycle).toEqual({ state: 'PUBLISHED', hasUnpublishedChanges: false });
    expect(p1.body.revisionId).toBe('3');
    expect(p1.body.fields[0].lifecycle.state).toBe('PUBLISHED');
    // the older drafts are gone
    expectError(await api('GET', `/v2beta/labels/${id}@1`), 404, 'NOT_FOUND');

    const levelId = p1.body.fields[0].id;
    const d2 = await api('POST', `/v2beta/labels/${id}:delta`, {
      requests: [
        {
          createSelectionChoice: {
            fieldId: levelId,
            choice: { id: 'medium', properties: { displayName: 'Medium', insertBeforeChoice: p1.body.fields[0].selectionOptions.choices[1].id } },
          },
        },
      ],
    });
    expect(d2.status).toBe(200);
    expect(d2.body).toEqual({ responses: [{ createSelectionChoice: { fieldId: levelId, id: 'medium' } }] });
    const afterDelta = (await api('GET', `/v2beta/labels/${id}?view=LABEL_VIEW_FULL`)).body;
    expect(afterDelta.lifecycle).toEqual({ state: 'PUBLISHED', hasUnpublishedChanges: true });
    expect(afterDelta.fields[0].selectionOptions.choices.map((c: any) => c.properties.displayName)).toEqual(['Low', 'Medium', 'High']);
    // @published still shows the published revision
    const pub = (await api('GET', `/v2beta/labels/${id}@published?view=LABEL_VIEW_FULL`)).body;
    expect(pub.name).toBe(`labels/${id}@3`);
    expect(pub.fields[0].selectionOptions.choices).toHaveLength(2);
    expect((await api('GET', `/v2beta/labels/${id}@latest`)).body).toMatchObject({ revisionId: '4' });
    expect((await api('GET', `/v2beta/labels/${id}@4`)).body).toMatchObject({ name: `labels/${id}@4` });
    expect((await api('GET', `/v2beta/labels/${id}`)).body).toEqual({
      name: `labels/${id}`,
      id,
      revisionId: '4',
      labelType: 'SHARED',
      properties: { title: 'Sensitivity', description: 'How secret' },
    });

    const p2 = await api('POST', `/v2beta/labels/${id}:publish`, {});
    expect(p2.body).toMatchObject({ revisionId: '5', lifecycle: { state: 'PUBLISHED', hasUnpublishedChanges: false } });
    expectError(await api('POST', `/v2beta/labels/${id}:publish`, {}), 400, 'FAILED_PRECONDITION', /no unpublished changes/);

    const dis = await api('POST', `/v2beta/labels/${id}:disable`, { disabledPolicy: { hideInSearch: true, showInApply: false } });
    expect(dis.body.lifecycle).toEqual({ state: 'DISABLED', hasUnpublishedChanges: false, disabledPolicy: { hideInSearch: true, showInApply: false } });
    expect(dis.body.schemaCapabilities).toMatchObject({ canEnable: true, canDelete: true, canDisable: false });
    expectError(await api('POST', `/v2beta/labels/${id}:disable`, {}), 400, 'FAILED_PRECONDITION');

    const en = await api('POST', `/v2beta/labels/${id}:enable`, {});
    expect(en.body.lifecycle).toEqual({ state: 'PUBLISHED', hasUnpublishedChanges: false });
    expectError(await api('POST', `/v2beta/labels/${id}:enable`, {}), 400, 'FAILED_PRECONDITION');
    expectError(await api('DELETE', `/v2beta/labels/${id}`), 400, 'FAILED_PRECONDITION', /disable it before deleting/);

    await api('POST', `/v2beta/labels/${id}:disable`, {});
    const del = await api('DELETE', `/v2beta/labels/${id}`);
    expect(del).toEqual({ status: 200, body: {} });
    expectError(await api('GET', `/v2beta/labels/${id}`), 404, 'NOT_FOUND');
  });

  it('deletes a draft label directly, refuses a published one', async () => {
    const draft = await create('Draft');
    expect((await api('DELETE', `/v2beta/labels/${draft.id}`)).status).toBe(200);
    const pub = await create('Live');
    await api('POST', `/v2beta/labels/${pub.id}:publish`, {});
    expectError(await api('DELETE', `/v2beta/labels/${pub.id}`), 400, 'FAILED_PRECONDITION');
  });

  it('rejects a stale writeControl.requiredRevisionId on delta, publish and delete', async () => {
    const label = await create();
    await api('POST', `/v2beta/labels/${label.id}:delta`, { requests: [{ updateLabel: { properties: { title: 'X' }, updateMask: 'title' } }] });
    const stale = { writeControl: { requiredRevisionId: '1' } };
    expectError(
      await api('POST', `/v2beta/labels/${label.id}:delta`, { ...stale, requests: [{ updateLabel: { properties: { title: 'Y' } } }] }),
      400,
      'FAILED_PRECONDITION',
      /not the latest revision.*latest: 2/,
    );
    expectError(await api('POST', `/v2beta/labels/${label.id}:publish`, stale), 400, 'FAILED_PRECONDITION');
    expectError(await api('DELETE', `/v2beta/labels/${label.id}?writeControl.requiredRevisionId=1`), 400, 'FAILED_PRECONDITION');
    expect((await api('GET', `/v2beta/labels/${label.id}`)).body.properties.title).toBe('X');
  });

  it('applies a delta all or nothing', async () => {
    const label = await create();
    const r = await api('POST', `/v2beta/labels/${label.id}:delta`, {
      requests: [{ updateLabel: { properties: { title: 'Changed' }, updateMask: 'title' } }, { deleteField: { id: 'nope' } }],
    });
    expectError(r, 404, 'NOT_FOUND', /requests\[1\].deleteField.id/);
    const after = (await api('GET', `/v2beta/labels/${label.id}`)).body;
    expect(after).toMatchObject({ revisionId: '1', properties: { title: 'Sensitivity' } });
  });

  it('runs all twelve delta request kinds', async () => {
    const label = await create('Kinds', {
      fields: [
        {
          id: 'sel',
          properties: { displayName: 'Sel' },
          selectionOptions: {
            choices: [
              { id: 'a', properties: { displayName: 'A' } },
              { id: 'b', properties: { displayName: 'B' } },
            ],
          },
        },
        { id: 'txt', properties: { displayName: 'Txt' }, textOptions: {} },
      ],
    });
    await api('POST', `/v2beta/labels/${label.id}:publish`, {});
    const r = await api('POST', `/v2beta/labels/${label.id}:delta`, {
      view: 'LABEL_VIEW_FULL',
      requests: [
        { updateLabel: { properties: { title: 'Kinds 2' }, updateMask: '*' } },
        { createField: { field: { id: 'num', properties: { displayName: 'Num' }, integerOptions: {} } } },
        { updateField: { id: 'num', properties: { displayName: 'Number', required: true }, updateMask: 'display_name,required' } },
        { updateFieldType: { id: 'num', dateOptions: { dateFormatType: 'SHORT_DATE' }, updateMask: '*' } },
        { disableField: { id: 'txt', disabledPolicy: { showInApply: true }, updateMask: '*' } },
        { enableField: { id: 'txt' } },
        { disableField: { id: 'txt', disabledPolicy: {} } },
        { deleteField: { id: 'txt' } },
        { createSelectionChoice: { fieldId: 'sel', choice: { id: 'c', properties: { displayName: 'C' } } } },
        {
          updateSelectionChoiceProperties: {
            fieldId: 'sel',
            id: 'c',
            properties: { displayName: 'Cee', insertBeforeChoice: 'a' },
            updateMask: 'displayName,insertBeforeChoice',
          },
        },
        { disableSelectionChoice: { fieldId: 'sel', id: 'b', disabledPolicy: { hideInSearch: true } } },
        { enableSelectionChoice: { fieldId: 'sel', id: 'b' } },
        { disableSelectionChoice: { fieldId: 'sel', id: 'a', disabledPolicy: {} } },
        { deleteSelectionChoice: { fieldId: 'sel', id: 'a' } },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.body.responses.map((x: any) => Object.keys(x)[0])).toEqual([
      'updateLabel',
      'createField',
      'updateField',
      'updateFieldType',
      'disableField',
      'enableField',
      'disableField',
      'deleteField',
      'createSelectionChoice',
      'updateSelectionChoiceProperties',
      'disableSelectionChoice',
      'enableSelectionChoice',
      'disableSelectionChoice',
      'deleteSelectionChoice',
    ]);
    expect(r.body.responses[9]).toEqual({ updateSelectionChoiceProperties: { priority: 1 } });
    const l = r.body.updatedLabel;
    expect(l.properties).toEqual({ title: 'Kinds 2' });
    expect(l.fields.map((f: any) => f.id)).toEqual(['sel', 'num']);
    expect(l.fields[1]).toMatchObject({
      properties: { displayName: 'Number', required: true },
      dateOptions: { dateFormatType: 'SHORT_DATE' },
      lifecycle: { state: 'UNPUBLISHED_DRAFT' },
    });
    expect(l.fields[0].selectionOptions.choices.map((c: any) => c.id)).toEqual(['c', 'b']);
  });

  it('refuses to delete a published field or choice before disabling it, and a type change of a published field', async () => {
    const label = await create('Strict', { fields: [{ id: 'f', properties: { displayName: 'F' }, textOptions: {} }] });
    await api('POST', `/v2beta/labels/${label.id}:publish`, {});
    expectError(
      await api('POST', `/v2beta/labels/${label.id}:delta`, { requests: [{ deleteField: { id: 'f' } }] }),
      400,
      'FAILED_PRECONDITION',
      /disable it before deleting/,
    );
    expectError(
      await api('POST', `/v2beta/labels/${label.id}:delta`, { requests: [{ updateFieldType: { id: 'f', integerOptions: {} } }] }),
      400,
      'FAILED_PRECONDITION',
      /type cannot change/,
    );
  });

  it('sets copy mode and enabled apps without a new revision', async () => {
    const label = await create();
    const cm = await api('POST', `/v2beta/labels/${label.id}:updateLabelCopyMode`, { copyMode: 'ALWAYS_COPY', view: 'LABEL_VIEW_FULL' });
    expect(cm.body).toMatchObject({ revisionId: '1', appliedLabelPolicy: { copyMode: 'ALWAYS_COPY' } });
    const apps = await api('POST', `/v2beta/labels/${label.id}:updateLabelEnabledAppSettings`, {
      enabledAppSettings: { enabledApps: [{ app: 'DRIVE' }, { app: 'GMAIL' }] },
      view: 'LABEL_VIEW_FULL',
    });
    expect(apps.body.enabledAppSettings).toEqual({ enabledApps: [{ app: 'DRIVE' }, { app: 'GMAIL' }] });
    expectError(await api('POST', `/v2beta/labels/${label.id}:updateLabelCopyMode`, { copyMode: 'SOMETIMES' }), 400, 'INVALID_ARGUMENT', /copyMode/);
    expectError(
      await api('POST', `/v2beta/labels/${label.id}:updateLabelEnabledAppSettings`, {
        enabledAppSettings: { enabledApps: [{ app: 'DRIVE' }, { app: 'DRIVE' }] },
      }),
      400,
      'INVALID_ARGUMENT',
    );
  });
});

describe('list, paging, limits, capabilities, locks', () => {
  it('pages with pageSize and pageToken; publishedOnly names the published revision', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await create(`L${i}`)).id);
    await api('POST', `/v2beta/labels/${ids[1]}:publish`, {});
    const seen: string[] = [];
    let pageToken = '';
    let pages = 0;
    do {
      const r = await api('GET', `/v2beta/labels?pageSize=2${pageToken ? `&pageToken=${pageToken}` : ''}`);
      expect(r.status).toBe(200);
      expect(r.body.labels.length).toBeLessThanOrEqual(2);
      seen.push(...r.body.labels.map((l: any) => l.id));
      pageToken = r.body.nextPageToken ?? '';
      pages++;
    } while (pageToken);
    expect(pages).toBe(3);
    expect(seen).toEqual(ids);
    const pub = await api('GET', '/v2beta/labels?publishedOnly=true&view=LABEL_VIEW_FULL');
    expect(pub.body.labels).toHaveLength(1);
    expect(pub.body.labels[0].name).toBe(`labels/${ids[1]}@${pub.body.labels[0].revisionId}`);
    expect(pub.body.labels[0].lifecycle.state).toBe('PUBLISHED');
    expect((await api('GET', '/v2beta/labels?minimumRole=EDITOR')).body.labels).toHaveLength(5);
  });

  it('rejects bad list parameters', async () => {
    expectError(await api('GET', '/v2beta/labels?pageSize=201'), 400, 'INVALID_ARGUMENT', /at most 200/);
    expectError(await api('GET', '/v2beta/labels?pageSize=abc'), 400, 'INVALID_ARGUMENT');
    expectError(await api('GET', '/v2beta/labels?pageToken=garbage'), 400, 'INVALID_ARGUMENT', /pageToken/);
    expectError(await api('GET', '/v2beta/labels?view=LABEL_VIEW_HUGE'), 400, 'INVALID_ARGUMENT', /view/);
    expectError(await api('GET', '/v2beta/labels?minimumRole=OWNER'), 400, 'INVALID_ARGUMENT', /minimumRole/);
    expectError(await api('GET', '/v2beta/labels?publishedOnly=maybe'), 400, 'INVALID_ARGUMENT', /publishedOnly/);
  });

  it('reports the configured limits and enforces them', async () => {
    const lim = await api('GET', '/v2beta/limits/label?name=limits/label');
    expect(lim.body).toMatchObject({ name: 'limits/label', maxFields: 4, fieldLimits: { selectionLimits: { maxChoices: 3 } } });
    expectError(await api('GET', '/v2beta/limits/label?name=limits/other'), 400, 'INVALID_ARGUMENT');
    const label = await create();
    const five = Array.from({ length: 5 }, (_, i) => ({ createField: { field: { properties: { displayName: `F${i}` }, textOptions: {} } } }));
    expectError(await api('POST', `/v2beta/labels/${label.id}:delta`, { requests: five }), 400, 'INVALID_ARGUMENT', /5 fields; the limit is 4/);
    const choices = Array.from({ length: 4 }, (_, i) => ({ properties: { displayName: `C${i}` } }));
    expectError(
      await api('POST', `/v2beta/labels/${label.id}:delta`, {
        requests: [{ createField: { field: { properties: { displayName: 'S' }, selectionOptions: { choices } } } }],
      }),
      400,
      'INVALID_ARGUMENT',
      /4 choices; the limit is 3/,
    );
  });

  it('answers users/me/capabilities and lists locks', async () => {
    const caps = await api('GET', '/v2beta/users/me/capabilities');
    expect(caps.body).toEqual({
      name: 'users/me/capabilities',
      canAccessLabelManager: true,
      canAdministrateLabels: false,
      canCreateSharedLabels: true,
      canCreateAdminLabels: false,
    });
    // any known user, by numeric id or email: another user's are a signed-in user's defaults; the caller's own follow its token
    expect((await api('GET', '/v2beta/users/bob@example.com/capabilities')).body).toEqual({
      name: 'users/bob@example.com/capabilities',
      canAccessLabelManager: true,
      canAdministrateLabels: false,
      canCreateSharedLabels: true,
      canCreateAdminLabels: false,
    });
    expect((await api('GET', '/v2beta/users/110000000000000000002/capabilities')).body.name).toBe('users/110000000000000000002/capabilities');
    expectError(await api('GET', '/v2beta/users/someone/capabilities'), 404, 'NOT_FOUND');
    const label = await create('Locked', { fields: [{ id: 'f', properties: { displayName: 'F' }, textOptions: {} }] });
    expect((await api('GET', `/v2beta/labels/${label.id}/locks`)).body).toEqual({ labelLocks: [] });
    await mock.store.write((s: TestState) => {
      s.labels.labels[0].locks.push({ id: 'k1', fieldId: 'f', state: 'ACTIVE', createTime: new Date().toISOString() });
    });
    const locks = await api('GET', `/v2beta/labels/${label.id}/revisions/1/locks`);
    expect(locks.body.labelLocks).toEqual([expect.objectContaining({ name: `labels/${label.id}/revisions/1/locks/k1`, fieldId: 'f', state: 'ACTIVE' })]);
    expectError(
      await api('POST', `/v2beta/labels/${label.id}:delta`, { requests: [{ updateField: { id: 'f', properties: { displayName: 'G' } } }] }),
      400,
      'FAILED_PRECONDITION',
      /locked/,
    );
    // locks page by 100 unless pageSize says otherwise
    await mock.store.write((s: TestState) => {
      for (let i = 2; i <= 150; i++) s.labels.labels[0].locks.push({ id: `k${i}`, state: 'ACTIVE', createTime: new Date().toISOString() });
    });
    const first = (await api('GET', `/v2beta/labels/${label.id}/locks`)).body;
    expect(first.labelLocks).toHaveLength(100);
    const rest = (await api('GET', `/v2beta/labels/${label.id}/locks?pageToken=${first.nextPageToken}`)).body;
    expect(rest.labelLocks).toHaveLength(50);
    expect(rest.nextPageToken).toBeUndefined();
  });
});

describe('permissions', () => {
  it('creates as an upsert by principal, lists with paging, patches, deletes, and batches', async () => {
    const label = await create();
    const base = `/v2beta/labels/${label.id}/permissions`;
    const a = await api('POST', base, { email: 'bob@example.com', role: 'READER' });
    expect(a.body).toEqual({ name: `labels/${label.id}/permissions/1`, role: 'READER', email: 'bob@example.com' });
    const again = await api('POST', base, { email: 'Bob@example.com', role: 'APPLIER' });
    expect(again.body).toEqual({ name: `labels/${label.id}/permissions/1`, role: 'APPLIER', email: 'bob@example.com' });
    const patched = await api('PATCH', base, { audience: 'audiences/default', role: 'READER' });
    expect(patched.body.name).toBe(`labels/${label.id}/permissions/2`);

    const batch = await api('POST', `${base}:batchUpdate`, {
      requests: [
        { parent: `labels/${label.id}`, labelPermission: { email: 'carol@example.com', role: 'EDITOR' } },
        { labelPermission: { email: 'dan@example.com', role: 'ORGANIZER' } },
        { labelPermission: { email: 'bob@example.com', role: 'READER' } },
      ],
    });
    expect(batch.status).toBe(200);
    expect(batch.body.permissions.map((p: any) => [p.email, p.role])).toEqual([
      ['carol@example.com', 'EDITOR'],
      ['dan@example.com', 'ORGANIZER'],
      ['bob@example.com', 'READER'],
    ]);

    const page1 = await api('GET', `${base}?pageSize=3`);
    expect(page1.body.labelPermissions).toHaveLength(3);
    const page2 = await api('GET', `${base}?pageSize=3&pageToken=${page1.body.nextPageToken}`);
    expect(page2.body.labelPermissions).toHaveLength(1);
    expect(page2.body.nextPageToken).toBeUndefined();

    // revision permissions share the label's set, named under the revision
    const rev = await api('GET', `/v2beta/labels/${label.id}/revisions/1/permissions`);
    expect(rev.body.labelPermissions[0].name).toBe(`labels/${label.id}/revisions/1/permissions/1`);
    const revAdd = await api('POST', `/v2beta/labels/${label.id}/revisions/1/permissions`, { email: 'erin@example.com', role: 'READER' });
    expect(revAdd.body.name).toBe(`labels/${label.id}/revisions/1/permissions/5`);
    expectError(await api('GET', `/v2beta/labels/${label.id}/revisions/99/permissions`), 404, 'NOT_FOUND');

    // batchDelete is all or nothing
    expectError(
      await api('POST', `${base}:batchDelete`, { requests: [{ name: `labels/${label.id}/permissions/3` }, { name: `labels/${label.id}/permissions/77` }] }),
      404,
      'NOT_FOUND',
    );
    expect((await api('GET', base)).body.labelPermissions).toHaveLength(5);
    const bd = await api('POST', `/v2beta/labels/${label.id}/revisions/1/permissions:batchDelete`, {
      requests: [{ name: `labels/${label.id}/permissions/3` }, { name: `labels/${label.id}/revisions/1/permissions/4` }],
    });
    expect(bd).toEqual({ status: 200, body: {} });
    expect((await api('DELETE', `${base}/5`)).body).toEqual({});
    expectError(await api('DELETE', `${base}/5`), 404, 'NOT_FOUND');
    expect((await api('GET', base)).body.labelPermissions.map((p: any) => p.name.split('/').pop())).toEqual(['1', '2']);
  });

  it('validates permissions', async () => {
    const label = await create();
    const base = `/v2beta/labels/${label.id}/permissions`;
    expectError(await api('POST', base, { email: 'x@example.com' }), 400, 'INVALID_ARGUMENT', /role is required/);
    expectError(await api('POST', base, { email: 'x@example.com', role: 'OWNER' }), 400, 'INVALID_ARGUMENT', /role/);
    expectError(await api('POST', base, { email: 'not-an-email', role: 'READER' }), 400, 'INVALID_ARGUMENT', /email/);
    expectError(await api('POST', base, { role: 'READER' }), 400, 'INVALID_ARGUMENT', /principal/);
    expectError(await api('POST', base, { email: 'x@example.com', audience: 'audiences/default', role: 'READER' }), 400, 'INVALID_ARGUMENT', /either/);
    expectError(await api('POST', base, { group: 'groups/1', role: 'READER' }), 400, 'INVALID_ARGUMENT', /by email/);
    expectError(await api('POST', base, { audience: 'everyone', role: 'READER' }), 400, 'INVALID_ARGUMENT', /audiences/);
    expectError(await api('POST', `${base}:batchUpdate`, { requests: [] }), 400, 'INVALID_ARGUMENT', /non-empty/);
    expectError(
      await api('POST', `${base}:batchUpdate`, { requests: [{ parent: 'labels/other', labelPermission: { email: 'x@example.com', role: 'READER' } }] }),
      400,
      'INVALID_ARGUMENT',
      /parent/,
    );
    expectError(await api('POST', `${base}:batchDelete`, { requests: [{ name: 'labels/other/permissions/1' }] }), 400, 'INVALID_ARGUMENT');
    expect((await api('GET', base)).body).toEqual({ labelPermissions: [] });
  });

  it('lets a user with a permission see the published label (drafts stay hidden) and an editor change it; others get 404/403', async () => {
    const label = await create();
    const bobToken = await mintToken(mock, { email: 'bob@example.com' });
    expectError(await api('GET', `/v2beta/labels/${label.id}`, undefined, bobToken), 404, 'NOT_FOUND');
    expect((await api('GET', '/v2beta/labels', undefined, bobToken)).body).toEqual({ labels: [] });
    await api('POST', `/v2beta/labels/${label.id}/permissions`, { email: 'bob@example.com', role: 'READER' });
    // a draft is visible to its editors only
    expectError(await api('GET', `/v2beta/labels/${label.id}`, undefined, bobToken), 404, 'NOT_FOUND');
    expect((await api('GET', '/v2beta/labels', undefined, bobToken)).body).toEqual({ labels: [] });
    await api('POST', `/v2beta/labels/${label.id}:delta`, {
      requests: [{ createField: { field: { properties: { displayName: 'Level' }, textOptions: {} } } }],
    });
    expect((await api('POST', `/v2beta/labels/${label.id}:publish`, {})).body.revisionId).toBe('3');
    expect((await api('GET', `/v2beta/labels/${label.id}`, undefined, bobToken)).status).toBe(200);
    // published: a reader sees the published revision, not the draft changes made after it
    await api('POST', `/v2beta/labels/${label.id}:delta`, { requests: [{ updateLabel: { properties: { title: 'Draft title' }, updateMask: 'title' } }] });
    for (const path of [`/v2beta/labels/${label.id}?view=LABEL_VIEW_FULL`, `/v2beta/labels/${label.id}@latest`, '/v2beta/labels?view=LABEL_VIEW_FULL']) {
      const body = (await api('GET', path, undefined, bobToken)).body;
      const seen = body.labels ? body.labels[0] : body;
      expect(seen).toMatchObject({ revisionId: '3', properties: { title: 'Sensitivity' } });
    }
    expectError(await api('GET', `/v2beta/labels/${label.id}@4`, undefined, bobToken), 404, 'NOT_FOUND');
    expect((await api('GET', `/v2beta/labels/${label.id}`)).body).toMatchObject({ revisionId: '4', properties: { title: 'Draft title' } });
    expect((await api('GET', '/v2beta/labels?minimumRole=EDITOR', undefined, bobToken)).body.labels).toHaveLength(0);
    expectError(await api('POST', `/v2beta/labels/${label.id}:publish`, {}, bobToken), 403, 'PERMISSION_DENIED', /not an editor/);
    await api('POST', `/v2beta/labels/${label.id}/permissions`, { email: 'bob@example.com', role: 'EDITOR' });
    expect((await api('POST', `/v2beta/labels/${label.id}:publish`, {}, bobToken)).status).toBe(200);
  });
});

describe('validation errors', () => {
  it('refuses bad label bodies and delta requests with INVALID_ARGUMENT naming the field', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ properties: { title: 'x' } }, /labelType is required/],
      [{ labelType: 'GOOGLE_APP', properties: { title: 'x' } }, /GOOGLE_APP/],
      [{ labelType: 'WEIRD', properties: { title: 'x' } }, /labelType must be one of/],
      [{ labelType: 'SHARED' }, /properties is required/],
      [{ labelType: 'SHARED', properties: { title: '' } }, /properties.title is required/],
      [{ labelType: 'SHARED', properties: { title: 't'.repeat(201) } }, /201 characters; the limit is 200/],
      [{ labelType: 'SHARED', properties: { title: 'x' }, learnMoreUri: 'ftp://x' }, /learnMoreUri/],
      [{ labelType: 'SHARED', properties: { title: 'x' }, fields: [{ properties: { displayName: 'F' } }] }, /fields\[0\] needs exactly one of/],
      [{ labelType: 'SHARED', properties: { title: 'x' }, fields: [{ id: 'bad id', properties: { displayName: 'F' }, textOptions: {} }] }, /fields\[0\].id/],
      [
        {
          labelType: 'SHARED',
          properties: { title: 'x' },
          fields: [
            { properties: { displayName: 'F' }, textOptions: {} },
            { properties: { displayName: 'F' }, textOptions: {} },
          ],
        },
        /already used/,
      ],
    ];
    for (const [b, msg] of cases) expectError(await api('POST', '/v2beta/labels', b), 400, 'INVALID_ARGUMENT', msg);
    expectError(await api('POST', '/v2beta/labels', { labelType: 'ADMIN', properties: { title: 'x' } }), 403, 'PERMISSION_DENIED', /useAdminAccess/);

    const label = await create();
    const deltas: Array<[unknown, RegExp]> = [
      [{}, /requests must be a non-empty list/],
      [{ requests: [{}] }, /requests\[0\] must hold exactly one of/],
      [{ requests: [{ updateLabel: {}, createField: {} }] }, /exactly one/],
      [{ requests: [{ updateLabel: { properties: { title: 'x' }, updateMask: 'colour' } }] }, /unknown field "colour"/],
      [{ requests: [{ updateLabel: { properties: { title: '' }, updateMask: 'title' } }] }, /title is required/],
      [{ requests: [{ createField: { field: { properties: { displayName: 'D' }, dateOptions: { dateFormatType: 'ISO' } } } }] }, /dateFormatType/],
      [{ requests: [{ createField: { field: { properties: { displayName: 'U' }, userOptions: { listOptions: { maxEntries: 0 } } } } }] }, /maxEntries/],
      [
        { requests: [{ createField: { field: { properties: { displayName: 'T' }, textOptions: {}, integerOptions: {} } } }] },
        /got textOptions, integerOptions/,
      ],
      [{ requests: [{ createField: { field: { properties: { displayName: 'T', insertBeforeField: 'zzz' }, textOptions: {} } } }] }, /insertBeforeField/],
      [
        {
          requests: [
            { createField: { field: { properties: { displayName: 'T' }, textOptions: {} } } },
            { createSelectionChoice: { fieldId: 'x', choice: {} } },
          ],
        },
        /fieldId/,
      ],
      [{ requests: [{ disableField: { id: '' } }] }, /disableField.id is required/],
      [{ view: 'ALL', requests: [{ updateLabel: { properties: { title: 'x' } } }] }, /view/],
      [{ writeControl: 'x', requests: [{ updateLabel: { properties: { title: 'x' } } }] }, /writeControl/],
    ];
    for (const [b, msg] of deltas) {
      const r = await api('POST', `/v2beta/labels/${label.id}:delta`, b);
      expect([400, 404]).toContain(r.status);
      expect(r.body.error.message).toMatch(msg);
    }
    expectError(await api('POST', `/v2beta/labels/${label.id}:frobnicate`, {}), 404, 'NOT_FOUND');
    expectError(await api('PUT', `/v2beta/labels/${label.id}`, {}), 405, 'UNIMPLEMENTED');
    expectError(await api('GET', `/v2beta/labels/${label.id}?view=X`), 400, 'INVALID_ARGUMENT');
    expectError(await api('GET', `/v2beta/labels/nope`), 404, 'NOT_FOUND');
    expectError(await api('POST', `/v2beta/labels/${label.id}:disable`, {}), 400, 'FAILED_PRECONDITION', /only a published label/);
    expectError(await api('GET', `/v2beta/labels/${label.id}@published`), 404, 'NOT_FOUND', /no published revision/);
    const bad = await mock.store.read((s: TestState) => s.labels.labels.length);
    expect(bad).toBe(1);
  });
});

describe('robustness', () => {
  it('never answers 500 to a malformed request', async () => {
    const label = await create('Fuzz', {
      fields: [{ id: 'sel', properties: { displayName: 'Sel' }, selectionOptions: { choices: [{ id: 'a', properties: { displayName: 'A' } }] } }],
    });
    const id = label.id;
    const bodies: unknown[] = [
      null,
      [],
      'text',
      7,
      true,
      {},
      { requests: 'x' },
      { requests: [null] },
      { requests: [5] },
      { requests: [{ createField: 5 }] },
      { requests: [{ createField: { field: { properties: 'x', textOptions: 1 } } }] },
      { requests: [{ updateSelectionChoiceProperties: { fieldId: 'sel', id: 'a', properties: null } }] },
      { requests: [{ updateFieldType: { id: 'sel', selectionOptions: { choices: 'x' } } }] },
      { requests: [{ disableField: { id: 'sel', disabledPolicy: 'x' } }] },
      { labelType: 'SHARED', properties: { title: 5 } },
      { labelType: 'SHARED', properties: { title: 'x' }, fields: 'x' },
      { labelType: 'SHARED', properties: { title: 'x' }, fields: [null] },
      { copyMode: 5 },
      { enabledAppSettings: { enabledApps: [null, 5] } },
      { enabledAppSettings: 'x' },
      { writeControl: [] },
      { writeControl: { requiredRevisionId: 5 } },
      { requests: [{ parent: 5, labelPermission: null }] },
      { requests: [{ name: 5 }] },
      { role: ['READER'], email: {} },
      { disabledPolicy: { hideInSearch: 'yes' } },
    ];
    const targets: Array<[string, string]> = [
      ['POST', '/v2beta/labels'],
      ['POST', `/v2beta/labels/${id}:delta`],
      ['POST', `/v2beta/labels/${id}:publish`],
      ['POST', `/v2beta/labels/${id}:disable`],
      ['POST', `/v2beta/labels/${id}:enable`],
      ['POST', `/v2beta/labels/${id}:updateLabelCopyMode`],
      ['POST', `/v2beta/labels/${id}:updateLabelEnabledAppSettings`],
      ['POST', `/v2beta/labels/${id}/permissions`],
      ['PATCH', `/v2beta/labels/${id}/permissions`],
      ['POST', `/v2beta/labels/${id}/permissions:batchUpdate`],
      ['POST', `/v2beta/labels/${id}/permissions:batchDelete`],
      ['POST', `/v2beta/labels/${id}/revisions/1/permissions:batchUpdate`],
    ];
    for (const [method, path] of targets) {
      for (const b of bodies) {
        const r = await api(method, path, b);
        expect({ method, path, b, status: r.status }).toMatchObject({ status: expect.any(Number) });
        expect(r.status, `${method} ${path} ${JSON.stringify(b)} → ${JSON.stringify(r.body)}`).toBeLessThan(500);
        if (r.status >= 400) expect(r.body.error).toMatchObject({ code: r.status, status: expect.any(String), message: expect.any(String) });
      }
    }
    for (const path of [
      '/v2beta/labels/%ZZ',
      '/v2beta/labels/a/b/c',
      '/v2beta/labels/x@',
      '/v2beta/users/me/capabilities?customer=bad%20id',
      '/v2beta/labels?customer=x',
    ]) {
      const r = await api('GET', path);
      expect(r.status, path).toBeLessThan(500);
    }
    const bad = await request(`${mock.url}/v2beta/labels`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{not json',
    });
    expect(bad.statusCode).toBe(400);
    expect(((await bad.body.json()) as any).error.status).toBe('INVALID_ARGUMENT');
  });
});

describe('authentication', () => {
  it('answers 401 without a valid token and 403 for a read-only scope on a write', async () => {
    const label = await create();
    expectError(await api('GET', '/v2beta/labels', undefined, null), 401, 'UNAUTHENTICATED', /missing/);
    expectError(await api('GET', '/v2beta/labels', undefined, 'ya29.unknown'), 401, 'UNAUTHENTICATED', /unknown/);
    const expired = await mintToken(mock, { ttlSeconds: -1 });
    expectError(await api('GET', '/v2beta/labels', undefined, expired), 401, 'UNAUTHENTICATED', /expired/);
    const revoked = await mintToken(mock);
    await mock.store.write((s: TestState) => {
      s.oauth.accessTokens[revoked].revoked = true;
    });
    expectError(await api('GET', '/v2beta/labels', undefined, revoked), 401, 'UNAUTHENTICATED', /revoked/);
    const other = await mintToken(mock, { scopes: ['openid', 'email'] });
    expectError(await api('GET', '/v2beta/labels', undefined, other), 403, 'PERMISSION_DENIED', /insufficient authentication scopes/);

    const ro = await mintToken(mock, { scopes: [LABEL_SCOPES.ro] });
    expect((await api('GET', `/v2beta/labels/${label.id}`, undefined, ro)).status).toBe(200);
    expectError(await api('POST', `/v2beta/labels/${label.id}:publish`, {}, ro), 403, 'PERMISSION_DENIED', /drive\.labels/);
    expectError(await api('POST', '/v2beta/labels', { labelType: 'SHARED', properties: { title: 'x' } }, ro), 403, 'PERMISSION_DENIED');
    expectError(await api('GET', '/v2beta/labels?useAdminAccess=true', undefined, ro), 403, 'PERMISSION_DENIED', /admin/);

    const admin = await mintToken(mock, { email: 'root@example.com', scopes: [LABEL_SCOPES.admin] });
    expect((await api('GET', '/v2beta/labels?useAdminAccess=true', undefined, admin)).body.labels).toHaveLength(1);
    const adminLabel = await api('POST', '/v2beta/labels?useAdminAccess=true', { labelType: 'ADMIN', properties: { title: 'Admin' } }, admin);
    expect(adminLabel.body.labelType).toBe('ADMIN');
    const adminRo = await mintToken(mock, { scopes: [LABEL_SCOPES.adminRo] });
    expect((await api('GET', '/v2beta/users/me/capabilities', undefined, adminRo)).body.canAdministrateLabels).toBe(true);
    const caller401 = await api('GET', '/v2beta/labels', undefined, null);
    expect(caller401.status).toBe(401);
  });
});
