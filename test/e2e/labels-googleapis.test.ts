import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OAuth2Client } from 'google-auth-library';
import { drivelabels, type drivelabels_v2beta } from 'googleapis/build/src/apis/drivelabels/index.js';
import { google } from 'googleapis';
import { request } from 'undici';
import servedBeta from '@opsctl/mock/services/labels/drivelabels-v2beta-discovery.json' with { type: 'json' };
import servedV2 from '@opsctl/mock/services/labels/drivelabels-v2-discovery.json' with { type: 'json' };
import { FileStore } from '@opsctl/mock/store.js';
import { mintAccessToken } from '@opsctl/mock/services/oauth/tokens.js';
import { runBin } from '../helpers/bin.js';
import { LABEL_SCOPES } from '../helpers/labels.js';
import { serveUrl } from '../helpers/serve.js';

/**
 * An independent client: Google's own generated Node client (googleapis 178, drivelabels v2beta) pointed
 * at `opsctl mock serve` (the built binary, state in a file) with `rootUrl`, authenticated by an
 * OAuth2Client holding an access token minted into that state file (what the mock's token endpoint
 * stores after a login). Every call must succeed and parse, which checks paths, verbs, bodies and shapes.
 *
 * The v2 and v2beta clients have the same methods (their type names differ by prefix): one type serves both.
 */
type Client = drivelabels_v2beta.Drivelabels;
let serve: ReturnType<typeof runBin>;
let dir: string;
let url: string;
let auth: OAuth2Client;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'opsctl-gapi-'));
  const statePath = join(dir, 'state.json');
  serve = runBin(['mock', 'serve', '--port', '0', '--state', statePath, '--json'], { env: { OPSCTL_CONFIG_DIR: dir } });
  url = await serveUrl(serve);
  const store = new FileStore(statePath);
  const token = await store.write(
    (s) => mintAccessToken(s, { client_id: 'gapi', sub: 'ada', email: 'ada@example.com', scopes: [LABEL_SCOPES.rw], ttlSeconds: 3600 }, Date.now()).token,
  );
  await store.close();
  auth = new OAuth2Client({ clientId: 'gapi' });
  auth.setCredentials({ access_token: token, token_type: 'Bearer', expiry_date: Date.now() + 3_600_000 });
}, 30_000);
afterAll(async () => {
  serve?.kill('SIGTERM');
  await serve?.catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

describe.each(['v2', 'v2beta'] as const)('googleapis drivelabels %s against the mock', (version) => {
  let client: Client;
  beforeAll(() => {
    client = version === 'v2' ? drivelabels({ version, auth, rootUrl: `${url}/` }) : drivelabels({ version, auth, rootUrl: `${url}/` });
  });
  it('runs the whole lifecycle', async () => {
    const created = await client.labels.create({ requestBody: { labelType: 'SHARED', properties: { title: 'Client label' } } });
    expect(created.status).toBe(200);
    const name = created.data.name!;
    expect(created.data.lifecycle?.state).toBe('UNPUBLISHED_DRAFT');

    const delta = await client.labels.delta({
      name,
      requestBody: {
        writeControl: { requiredRevisionId: created.data.revisionId },
        view: 'LABEL_VIEW_FULL',
        requests: [
          { createField: { field: { properties: { displayName: 'Status' }, selectionOptions: { choices: [{ properties: { displayName: 'Open' } }] } } } },
          { updateLabel: { properties: { title: 'Client label', description: 'from googleapis' }, updateMask: 'description' } },
        ],
      },
    });
    expect(delta.data.responses).toHaveLength(2);
    const fieldId = delta.data.responses![0]!.createField!.id!;
    expect(delta.data.updatedLabel?.properties?.description).toBe('from googleapis');

    const pub1 = await client.labels.publish({ name, requestBody: { writeControl: { requiredRevisionId: delta.data.updatedLabel!.revisionId } } });
    expect(pub1.data.lifecycle).toMatchObject({ state: 'PUBLISHED', hasUnpublishedChanges: false });

    const delta2 = await client.labels.delta({
      name,
      requestBody: { requests: [{ createSelectionChoice: { fieldId, choice: { properties: { displayName: 'Closed' } } } }] },
    });
    expect(delta2.data.responses![0]!.createSelectionChoice?.fieldId).toBe(fieldId);
    const pub2 = await client.labels.publish({ name, requestBody: {} });
    expect(pub2.data.fields?.[0]?.selectionOptions?.choices).toHaveLength(2);

    const got = await client.labels.get({ name: `${name}@published`, view: 'LABEL_VIEW_FULL' });
    expect(got.data.revisionId).toBe(pub2.data.revisionId);
    const listed = await client.labels.list({ view: 'LABEL_VIEW_BASIC', publishedOnly: true, pageSize: 10 });
    expect(listed.data.labels?.map((l) => l.id)).toContain(created.data.id);

    await client.labels.updateLabelCopyMode({ name, requestBody: { copyMode: 'COPY_APPLIABLE' } });
    await client.labels.updateLabelEnabledAppSettings({ name, requestBody: { enabledAppSettings: { enabledApps: [{ app: 'DRIVE' }] } } });

    const disabled = await client.labels.disable({ name, requestBody: { disabledPolicy: { hideInSearch: true } } });
    expect(disabled.data.lifecycle?.state).toBe('DISABLED');
    const enabled = await client.labels.enable({ name, requestBody: {} });
    expect(enabled.data.lifecycle?.state).toBe('PUBLISHED');
    await client.labels.disable({ name, requestBody: {} });

    const locks = await client.labels.locks.list({ parent: name });
    expect(locks.data.labelLocks).toEqual([]);
    const revLocks = await client.labels.revisions.locks.list({ parent: `${name}/revisions/${enabled.data.revisionId}` });
    expect(revLocks.status).toBe(200);
    const limits = await client.limits.getLabel({ name: 'limits/label' });
    expect(limits.data.maxFields).toBe(10);
    expect(limits.data.fieldLimits?.selectionLimits?.maxChoices).toBe(200);
    const caps = await client.users.getCapabilities({ name: 'users/me/capabilities' });
    expect(caps.data.canCreateSharedLabels).toBe(true);

    const del = await client.labels.delete({ name });
    expect(del.status).toBe(200);
    await expect(client.labels.get({ name })).rejects.toMatchObject({ status: 404 });
  });

  it('refuses a stale revision and a published delete with Google-shaped errors the client understands', async () => {
    const created = await client.labels.create({ requestBody: { labelType: 'SHARED', properties: { title: 'Stale' } } });
    const name = created.data.name!;
    await client.labels.delta({ name, requestBody: { requests: [{ updateLabel: { properties: { title: 'Stale 2' }, updateMask: 'title' } }] } });
    const err = await client.labels
      .delta({
        name,
        requestBody: { writeControl: { requiredRevisionId: '1' }, requests: [{ updateLabel: { properties: { title: 'x' }, updateMask: 'title' } }] },
      })
      .catch((e: any) => e);
    expect(err.status).toBe(400);
    expect(err.errors?.[0]?.message ?? err.message).toMatch(/not the latest revision/);
    await client.labels.publish({ name, requestBody: {} });
    await expect(client.labels.delete({ name })).rejects.toMatchObject({ status: 400 });
  });

  it('manages permissions on a label and a revision, one by one and in batches', async () => {
    const created = await client.labels.create({ requestBody: { labelType: 'SHARED', properties: { title: 'Perms' } } });
    const name = created.data.name!;
    const p = await client.labels.permissions.create({ parent: name, requestBody: { email: 'bob@example.com', role: 'READER' } });
    expect(p.data.name).toBe(`${name}/permissions/1`);
    const up = await client.labels.updatePermissions({ parent: name, requestBody: { email: 'bob@example.com', role: 'APPLIER' } });
    expect(up.data.role).toBe('APPLIER');
    const batch = await client.labels.permissions.batchUpdate({
      parent: name,
      requestBody: {
        requests: [
          { parent: name, labelPermission: { email: 'carol@example.com', role: 'EDITOR' } },
          { parent: name, labelPermission: { audience: 'audiences/default', role: 'READER' } },
        ],
      },
    });
    expect(batch.data.permissions).toHaveLength(2);
    const rev = `${name}/revisions/${created.data.revisionId}`;
    const revBatch = await client.labels.revisions.permissions.batchUpdate({
      parent: rev,
      requestBody: { requests: [{ labelPermission: { email: 'dan@example.com', role: 'ORGANIZER' } }] },
    });
    expect(revBatch.data.permissions?.[0]?.name).toBe(`${rev}/permissions/4`);
    await client.labels.revisions.updatePermissions({ parent: rev, requestBody: { email: 'dan@example.com', role: 'READER' } });
    const revCreate = await client.labels.revisions.permissions.create({ parent: rev, requestBody: { email: 'erin@example.com', role: 'READER' } });

    const page1 = await client.labels.permissions.list({ parent: name, pageSize: 2 });
    expect(page1.data.labelPermissions).toHaveLength(2);
    const page2 = await client.labels.permissions.list({ parent: name, pageSize: 2, pageToken: page1.data.nextPageToken! });
    const page3 = await client.labels.permissions.list({ parent: name, pageSize: 2, pageToken: page2.data.nextPageToken! });
    expect(page3.data.labelPermissions).toHaveLength(1);
    expect(page3.data.nextPageToken).toBeUndefined();
    const revList = await client.labels.revisions.permissions.list({ parent: rev });
    expect(revList.data.labelPermissions).toHaveLength(5);

    await client.labels.revisions.permissions.delete({ name: revCreate.data.name! });
    await client.labels.permissions.delete({ name: p.data.name! });
    await client.labels.revisions.permissions.batchDelete({ parent: rev, requestBody: { requests: [{ name: `${rev}/permissions/4` }] } });
    await client.labels.permissions.batchDelete({ parent: name, requestBody: { requests: [{ name: batch.data.permissions![0]!.name! }] } });
    const left = await client.labels.permissions.list({ parent: name });
    expect(left.data.labelPermissions?.map((x) => x.audience)).toEqual(['audiences/default']);
  });
});

describe('the label mock serves its own discovery documents', () => {
  it("at /$discovery/rest?version=v2 and v2beta, without credentials: Google's documents with their root URLs pointed at the mock", async () => {
    for (const [version, served] of [
      ['v2', servedV2],
      ['v2beta', servedBeta],
    ] as const) {
      const res = await request(`${url}/$discovery/rest?version=${version}`);
      expect(res.statusCode).toBe(200);
      const doc = (await res.body.json()) as Record<string, unknown>;
      expect(doc).toEqual({ ...served, rootUrl: `${url}/`, mtlsRootUrl: `${url}/`, baseUrl: `${url}/` });
    }
    const v1 = await request(`${url}/$discovery/rest?version=v1`);
    expect(v1.statusCode).toBe(404);
    expect(((await v1.body.json()) as any).error.message).toMatch(/only v2, v2beta/);
    const none = await request(`${url}/$discovery/rest`);
    expect(none.statusCode).toBe(400);
    expect(((await none.body.json()) as any).error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
  });

  it.each(['v2', 'v2beta'])('googleapis builds a %s client from that document (google.discoverAPI) and drives the mock with it', async (version) => {
    const api = await google.discoverAPI<any>(`${url}/$discovery/rest?version=${version}`, { auth });
    const created = await api.labels.create({ requestBody: { labelType: 'SHARED', properties: { title: 'Discovered' } } });
    expect(created.status).toBe(200);
    const name = created.data.name as string;
    const delta = await api.labels.delta({
      name,
      requestBody: {
        writeControl: { requiredRevisionId: created.data.revisionId },
        view: 'LABEL_VIEW_FULL',
        requests: [
          { createField: { field: { properties: { displayName: 'Level' }, selectionOptions: { choices: [{ properties: { displayName: 'Low' } }] } } } },
        ],
      },
    });
    expect(delta.data.updatedLabel.fields[0].properties.displayName).toBe('Level');
    const published = await api.labels.publish({ name, requestBody: {} });
    expect(published.data.lifecycle).toMatchObject({ state: 'PUBLISHED', hasUnpublishedChanges: false });
    const perm = await api.labels.permissions.create({ parent: name, requestBody: { email: 'bob@example.com', role: 'READER' } });
    expect(perm.data.role).toBe('READER');
    const listed = await api.labels.list({ view: 'LABEL_VIEW_FULL', pageSize: 50 });
    expect(listed.data.labels.map((l: { id: string }) => l.id)).toContain(created.data.id);
    const limits = await api.limits.getLabel({ name: 'limits/label' });
    expect(limits.data.maxFields).toBe(10);
    await expect(api.labels.get({ name: 'labels/nope' })).rejects.toMatchObject({ status: 404 });
  });
});
