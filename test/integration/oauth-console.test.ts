import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { DEFAULT_CLIENT_ID } from '@opsctl/mock/services/oauth/registry.js';
import { mintRefreshToken } from '@opsctl/mock/services/oauth/tokens.js';
import { startMock } from '../helpers/mock.js';
import { playBrowser, postForm } from '../helpers/oauth-browser.js';

// The developer console's side of the mock authorization server, over real HTTP on port 0, with the
// mock clock moved forward instead of waiting (seed 000, "States and transitions" and "Limits").

let mock: Awaited<ReturnType<typeof startMock>>;
const MIN = 60_000;
const DAY = 24 * 60 * MIN;
const SHA1 = 'da39a3ee5e6b4b0d3255bfef95601890afd80709';
const SHA1_COLONS = 'DA:39:A3:EE:5E:6B:4B:0D:32:55:BF:EF:95:60:18:90:AF:D8:07:09';

beforeAll(async () => {
  mock = await startMock({ services: ['oauth', 'api'] });
});
afterAll(async () => {
  await mock.close();
});

async function admin(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown) {
  const res = await request(`${mock.url}/oauth2/mock${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: text ? JSON.parse(text) : undefined };
}

const create = (body: Record<string, unknown>) => admin('POST', '/clients', body);

/** A refresh token of alice for this client, minted in the store (the grant itself is tested elsewhere). */
async function grant(clientId: string): Promise<string> {
  return mock.store.write(
    (s) => mintRefreshToken(s, { client_id: clientId, sub: '110000000000000000001', email: 'alice@example.com', scopes: ['email'] }, mock.clock.now()).token,
  );
}

/** A refresh request at the token endpoint, the way a mobile app makes it. */
function refresh(clientId: string, rt: string, headers: Record<string, string> = {}) {
  return postForm(`${mock.url}/token`, { grant_type: 'refresh_token', client_id: clientId, refresh_token: rt }, headers);
}

describe('the console routes are registered on their first request', () => {
  it('a fresh mock answers a wrong method on a console path 405 and an unknown console path 404, then serves the console', async () => {
    const fresh = await startMock({ services: ['oauth'] });
    try {
      const wrong = await request(`${fresh.url}/oauth2/mock/sweep`, { method: 'GET' });
      expect(wrong.statusCode).toBe(405);
      expect(((await wrong.body.json()) as { error: string }).error).toBe('method_not_allowed');
      const unknown = await request(`${fresh.url}/oauth2/mock/nothing-here`, { method: 'GET' });
      expect(unknown.statusCode).toBe(404);
      await unknown.body.dump();
      const list = await request(`${fresh.url}/oauth2/mock/clients`, { method: 'GET' });
      expect(list.statusCode).toBe(200);
      expect(((await list.body.json()) as { clients: Array<{ client_id: string }> }).clients.map((c) => c.client_id)).toContain(DEFAULT_CLIENT_ID);
    } finally {
      await fresh.close();
    }
  });

  it('a fresh mock lists the console routes among its routes', async () => {
    const fresh = await startMock({ services: ['oauth'] });
    try {
      const routes = await fresh.routes();
      expect(routes.some((r) => r.method === 'POST' && r.path === '/oauth2/mock/clients/:client_id/integrity')).toBe(true);
      expect(routes.some((r) => r.method === 'POST' && r.path === '/token')).toBe(true);
    } finally {
      await fresh.close();
    }
  });
});

describe('clients of every seed type', () => {
  it('creates, lists, gets, updates and deletes each type with its fields', async () => {
    const made = await Promise.all([
      create({ type: 'desktop', name: 'Desk' }),
      create({ type: 'universal_desktop', name: 'Uni', store_id: '9NBLGGH4NNS1' }),
      create({ type: 'mobile_a', name: 'Droid', package_name: 'com.example.droid', sha1_fingerprint: SHA1 }),
      create({ type: 'mobile_b', name: 'Phone', bundle_id: 'com.example.phone', store_id: '284882215', team_id: 'ABCDE12345' }),
      create({ type: 'extension', name: 'Ext', item_id: 'abcdefghijklmnopabcdefghijklmnop' }),
    ]);
    for (const m of made) expect(m.status, JSON.stringify(m.json)).toBe(201);
    const [desk, uni, droid, phone, ext] = made.map((m) => m.json);
    expect(desk.client_id).toMatch(/^\d{12}-[a-z0-9]{32}\.apps\.mock$/);
    // The secret is shown once at creation, never by get or list.
    expect(desk.client_secret).toMatch(/^MOCKSPX-/);
    expect(uni.client_secret).toBeTruthy();
    for (const pub of [droid, phone, ext]) expect(pub.client_secret).toBeUndefined();
    expect(droid).toMatchObject({ sha1_fingerprint: SHA1_COLONS, custom_scheme_enabled: false, ownership: { state: 'unverified' } });
    expect(phone).toMatchObject({
      bundle_id: 'com.example.phone',
      store_id: '284882215',
      team_id: 'ABCDE12345',
      integrity: { configured: 'disabled', effective: 'disabled' },
    });
    expect(ext).toMatchObject({ item_id: 'abcdefghijklmnopabcdefghijklmnop', ownership: { state: 'unverified' } });

    const got = await admin('GET', `/clients/${desk.client_id}`);
    expect(got.json).toMatchObject({ type: 'desktop', name: 'Desk', has_secret: true, status: 'active' });
    expect(got.json.client_secret).toBeUndefined();
    const list = await admin('GET', '/clients');
    const ids = list.json.clients.map((c: any) => c.client_id);
    for (const m of made) expect(ids).toContain(m.json.client_id);
    expect(JSON.stringify(list.json)).not.toContain(desk.client_secret);

    const upd = await admin('PATCH', `/clients/${phone.client_id}`, { name: 'Phone 2', store_id: null });
    expect(upd.json).toMatchObject({ name: 'Phone 2', store_id: null });
    const del = await admin('DELETE', `/clients/${ext.client_id}`);
    expect(del.json).toMatchObject({ status: 'deleted', deleted_by: 'manual' });
  });

  it('validates every field as the seed says: 400 naming the field, nothing created', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: 'x' }, 'type'],
      [{ type: 'laptop', name: 'x' }, 'type'],
      [{ type: 'desktop' }, 'name'],
      [{ type: 'desktop', name: '   ' }, 'name'],
      [{ type: 'desktop', name: 'x'.repeat(129) }, 'name'],
      [{ type: 'universal_desktop', name: 'x', store_id: '9NBLGGH4NNS' }, 'store_id'],
      [{ type: 'universal_desktop', name: 'x', store_id: '9NBLGGH4NNS12' }, 'store_id'],
      [{ type: 'universal_desktop', name: 'x' }, 'store_id'],
      [{ type: 'mobile_b', name: 'x', bundle_id: 'com.a', store_id: 'id284882215' }, 'store_id'],
      [{ type: 'mobile_b', name: 'x', bundle_id: 'com a' }, 'bundle_id'],
      [{ type: 'mobile_b', name: 'x' }, 'bundle_id'],
      [{ type: 'mobile_b', name: 'x', bundle_id: 'com.a', team_id: 'abc' }, 'team_id'],
      [{ type: 'mobile_b', name: 'x', bundle_id: 'com.a.*', integrity: true, team_id: 'ABCDE12345' }, 'bundle_id'],
      [{ type: 'mobile_b', name: 'x', bundle_id: 'com.a', integrity: true }, 'team_id'],
      [{ type: 'mobile_a', name: 'x', sha1_fingerprint: SHA1 }, 'package_name'],
      [{ type: 'mobile_a', name: 'x', package_name: '1com.example', sha1_fingerprint: SHA1 }, 'package_name'],
      [{ type: 'mobile_a', name: 'x', package_name: 'com.example.a', sha1_fingerprint: 'abcd' }, 'sha1_fingerprint'],
      [{ type: 'mobile_a', name: 'x', package_name: 'com.example.a' }, 'sha1_fingerprint'],
      [{ type: 'mobile_a', name: 'x', package_name: 'com.example.a', sha1_fingerprint: SHA1, custom_scheme_enabled: 'yes' }, 'custom_scheme_enabled'],
      [{ type: 'extension', name: 'x', item_id: 'ABCDEFGHIJKLMNOPABCDEFGHIJKLMNOP' }, 'item_id'],
      [{ type: 'desktop', name: 'x', item_id: 'abcdefghijklmnopabcdefghijklmnop' }, 'item_id'],
      [{ type: 'desktop', name: 'x', color: 'red' }, 'color'],
      [{ type: 'desktop', name: 'x', client_id: 'bad id' }, 'client_id'],
    ];
    const before = (await admin('GET', '/clients')).json.clients.length;
    for (const [body, field] of cases) {
      const r = await create(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.error_description.startsWith(`${field}:`), `${JSON.stringify(body)} → ${r.json.error_description}`).toBe(true);
    }
    expect((await admin('GET', '/clients')).json.clients.length).toBe(before);
  });

  it('client mistakes are 4xx, never 500: bad JSON, wrong content type, prototype names, duplicates', async () => {
    const raw = await request(`${mock.url}/oauth2/mock/clients`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{nope' });
    expect(raw.statusCode).toBe(400);
    await raw.body.dump();
    const form = await request(`${mock.url}/oauth2/mock/clients`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'type=desktop',
    });
    expect(form.statusCode).toBe(415);
    await form.body.dump();
    expect((await create({ type: 'desktop', name: 'x'.repeat(70_000) })).status).toBe(413);
    expect((await admin('POST', '/clients', [1, 2])).status).toBe(400);
    for (const id of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      expect((await admin('GET', `/clients/${id}`)).status).toBe(404);
      expect((await admin('PATCH', `/clients/${id}`, { name: 'x' })).status).toBe(404);
      expect((await admin('POST', `/clients/${id}/restore`)).status).toBe(404);
      const tok = await postForm(`${mock.url}/token`, { grant_type: 'refresh_token', client_id: id, refresh_token: 'x' });
      expect(tok.status).toBe(401);
    }
    expect((await create({ type: 'desktop', name: 'x', client_id: 'dup.apps.mock' })).status).toBe(201);
    expect((await create({ type: 'desktop', name: 'x', client_id: 'dup.apps.mock' })).status).toBe(409);
    expect((await admin('PATCH', '/clients/dup.apps.mock', { type: 'mobile_a' })).json.error_description).toMatch(/^type:/);
    expect((await admin('PATCH', '/clients/dup.apps.mock', {})).status).toBe(400);
  });
});

describe('integrity check of mobile platform B (every state and transition, 15 minutes on the mock clock)', () => {
  it('enable needs a team ID and a bundle identifier without *; then monitoring → enforced → monitoring → disabled', async () => {
    const c = (await create({ type: 'mobile_b', name: 'Attested', bundle_id: 'com.example.*' })).json;
    const id = c.client_id as string;
    const act = (action: string) => admin('POST', `/clients/${id}/integrity`, { action });
    const metrics = async () => (await admin('GET', `/clients/${id}/metrics`)).json;
    const rt = await grant(id);
    const token = async () => (await admin('POST', `/clients/${id}/integrity-token`)).json.token as string;
    const requests = async () => ({
      verified: await refresh(id, rt, { 'x-integrity-token': await token() }),
      outdated: await refresh(id, rt, { 'x-ios-bundle-identifier': 'com.example.attested' }),
      unknown: await refresh(id, rt),
      invalid: await refresh(id, rt, { 'x-integrity-token': 'not.a.token' }),
    });

    // disabled → enable: refused without a team ID, then with a wildcard bundle identifier.
    expect((await act('enforce')).status).toBe(409); // disabled → enforce is not a transition
    expect((await act('unenforce')).status).toBe(409);
    expect((await act('disable')).status).toBe(409);
    let r = await act('enable');
    expect(r.status).toBe(400);
    expect(r.json.error_description).toMatch(/^team_id:/);
    await admin('PATCH', `/clients/${id}`, { team_id: 'ABCDE12345' });
    r = await act('enable');
    expect(r.status).toBe(400);
    expect(r.json.error_description).toMatch(/^bundle_id:/);
    await admin('PATCH', `/clients/${id}`, { bundle_id: 'com.example.attested' });
    r = await act('enable');
    expect(r.status).toBe(200);
    expect(r.json.integrity).toMatchObject({ configured: 'monitoring', effective: 'disabled', pending: { to: 'monitoring' } });
    expect((await act('enable')).status).toBe(409);
    expect((await act('unenforce')).status).toBe(409);

    // Not in force yet: nothing counted, nothing blocked.
    let out = await requests();
    for (const res of Object.values(out)) expect(res.status).toBe(200);
    expect((await metrics()).metrics).toMatchObject({ verified: 0, unverified_outdated_client: 0, unverified_unknown_origin: 0, unverified_invalid: 0 });

    // 15 minutes later: monitoring only — the four categories counted, nothing blocked.
    mock.clock.advance(15 * MIN);
    expect((await metrics()).effective).toBe('monitoring');
    out = await requests();
    for (const res of Object.values(out)) expect(res.status).toBe(200);
    expect((await metrics()).metrics).toEqual({ verified: 1, unverified_outdated_client: 1, unverified_unknown_origin: 1, unverified_invalid: 1, rejected: 0 });

    // The bundle identifier is frozen once the check is used; the team ID cannot go while it is on.
    expect((await admin('PATCH', `/clients/${id}`, { bundle_id: 'com.example.other' })).status).toBe(409);
    expect((await admin('PATCH', `/clients/${id}`, { team_id: null })).status).toBe(409);

    // monitoring → enforce: in force 15 minutes later; then only verified requests pass.
    r = await act('enforce');
    expect(r.json.integrity).toMatchObject({ configured: 'enforced', effective: 'monitoring' });
    expect((await act('enforce')).status).toBe(409);
    mock.clock.advance(14 * MIN);
    expect((await refresh(id, rt)).status).toBe(200); // still monitoring at 14 minutes
    mock.clock.advance(1 * MIN);
    out = await requests();
    expect(out.verified.status).toBe(200);
    for (const res of [out.outdated, out.unknown, out.invalid]) {
      expect(res.status).toBe(401);
      expect(res.json.error).toBe('invalid_client');
      expect(res.json.error_description).toMatch(/integrity/);
    }
    expect((await metrics()).metrics).toMatchObject({
      verified: 2,
      unverified_outdated_client: 2,
      unverified_unknown_origin: 3,
      unverified_invalid: 2,
      rejected: 3,
    });
    // An integrity token of another app or an expired one is invalid.
    const other = (await create({ type: 'mobile_b', name: 'Other', bundle_id: 'com.example.other', team_id: 'ABCDE12345' })).json;
    const foreign = (await admin('POST', `/clients/${other.client_id}/integrity-token`)).json.token;
    expect((await refresh(id, rt, { 'x-integrity-token': foreign })).status).toBe(401);
    const stale = await token();
    mock.clock.advance(61 * MIN);
    expect((await refresh(id, rt, { 'x-integrity-token': stale })).status).toBe(401);
    expect((await refresh(id, rt, { 'x-integrity-token': await token() })).status).toBe(200);

    // enforced → unenforce: all requests allowed again 15 minutes later.
    r = await act('unenforce');
    expect(r.json.integrity).toMatchObject({ configured: 'monitoring', effective: 'enforced' });
    expect((await refresh(id, rt)).status).toBe(401);
    mock.clock.advance(15 * MIN);
    expect((await refresh(id, rt)).status).toBe(200);

    // monitoring → enforce → disable (from the enforced state): monitoring and enforcement stop.
    await act('enforce');
    mock.clock.advance(15 * MIN);
    expect((await refresh(id, rt)).status).toBe(401);
    r = await act('disable');
    expect(r.json.integrity).toMatchObject({ configured: 'disabled', effective: 'enforced' });
    expect((await act('disable')).status).toBe(409);
    mock.clock.advance(15 * MIN);
    const counted = (await metrics()).metrics;
    expect((await refresh(id, rt)).status).toBe(200);
    expect((await metrics()).metrics).toEqual(counted); // disabled: not counted either
    // disabled → enable again, and monitoring → disable.
    expect((await act('enable')).status).toBe(200);
    mock.clock.advance(15 * MIN);
    expect((await act('disable')).json.integrity).toMatchObject({ configured: 'disabled', effective: 'monitoring' });
    mock.clock.advance(15 * MIN);
    expect((await metrics()).effective).toBe('disabled');
  });

  it('the integrity check is a mobile B setting; the mock clock is also a test knob', async () => {
    const desk = (await create({ type: 'desktop', name: 'D' })).json;
    expect((await admin('POST', `/clients/${desk.client_id}/integrity`, { action: 'enable' })).status).toBe(400);
    expect((await admin('GET', `/clients/${desk.client_id}/metrics`)).status).toBe(400);
    const phone = (await create({ type: 'mobile_b', name: 'P', bundle_id: 'com.example.p', team_id: 'ABCDE12345', integrity: true })).json;
    expect(phone.integrity).toMatchObject({ configured: 'monitoring', effective: 'disabled' });
    expect((await admin('POST', `/clients/${phone.client_id}/integrity`, { action: 'explode' })).json.error_description).toMatch(/^action:/);
    const knob = await request(`${mock.url}/__mock/clock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ advance_seconds: 900 }),
    });
    expect(knob.statusCode).toBe(200);
    await knob.body.dump();
    expect((await admin('GET', `/clients/${phone.client_id}/metrics`)).json.effective).toBe('monitoring');
    const badKnob = await request(`${mock.url}/__mock/clock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ advance_seconds: -1 }),
    });
    expect(badKnob.statusCode).toBe(400);
    await badKnob.body.dump();
  });
});

describe('custom URI scheme of mobile platform A', () => {
  it('is off by default (invalid_request); on makes the custom-scheme redirect work; off again refuses it', async () => {
    const c = (await create({ type: 'mobile_a', name: 'Droid', package_name: 'com.example.scheme', sha1_fingerprint: SHA1 })).json;
    const url = `${mock.url}/o/oauth2/v2/auth?client_id=${c.client_id}&redirect_uri=${encodeURIComponent('com.example.scheme:/oauth2redirect')}&response_type=code&scope=email`;
    let page = await playBrowser(url);
    expect(page.pageStatus).toBe(400);
    expect(page.page).toContain('invalid_request');
    expect((await admin('PATCH', `/clients/${c.client_id}`, { custom_scheme_enabled: true })).json.custom_scheme_enabled).toBe(true);
    page = await playBrowser(url);
    expect(page.pageStatus).toBe(200);
    expect(page.location).toMatch(/^com\.example\.scheme:\/oauth2redirect\?code=/);
    await admin('PATCH', `/clients/${c.client_id}`, { custom_scheme_enabled: false });
    expect((await playBrowser(url)).pageStatus).toBe(400);
  });
});

describe('ownership verification', () => {
  it('mobile A: unverified → (no store app, not an admin) still unverified → verified → fingerprint changed → unverified', async () => {
    const c = (await create({ type: 'mobile_a', name: 'Owned', package_name: 'com.example.owned', sha1_fingerprint: SHA1 })).json;
    const verify = (account: string) => admin('POST', `/clients/${c.client_id}/verify-ownership`, { account });
    let r = await verify('alice@example.com');
    expect(r.status).toBe(409);
    expect(r.json.client.ownership).toMatchObject({ state: 'unverified', problem: expect.stringMatching(/no app in the store console/) });
    expect(
      (await admin('POST', '/store/apps', { package_name: 'com.example.owned', sha1_fingerprint: SHA1_COLONS, admins: ['alice@example.com'] })).status,
    ).toBe(201);
    r = await verify('bob@example.com');
    expect(r.json.client.ownership.problem).toMatch(/no administrator rights/);
    r = await verify('alice@example.com');
    expect(r.status).toBe(200);
    expect(r.json.ownership).toMatchObject({ state: 'verified', account: 'alice@example.com', problem: null });
    r = await admin('PATCH', `/clients/${c.client_id}`, { sha1_fingerprint: '00'.repeat(20) });
    expect(r.json.ownership.state).toBe('unverified');
    expect((await verify('')).status).toBe(400);
  });

  it('extension: verified against a store item published by the account', async () => {
    const c = (await create({ type: 'extension', name: 'Ext', item_id: 'ppppppppppppppppppppppppppppppp' + 'a' })).json;
    const verify = (account: string) => admin('POST', `/clients/${c.client_id}/verify-ownership`, { account });
    expect((await verify('carol@partner.example')).json.client.ownership.problem).toMatch(/no store item/);
    await admin('POST', '/store/items', { item_id: c.item_id, publisher: 'carol@partner.example' });
    expect((await verify('alice@example.com')).json.client.ownership.problem).toMatch(/not the publisher/);
    expect((await verify('carol@partner.example')).json.ownership.state).toBe('verified');
    const desk = (await create({ type: 'desktop', name: 'D' })).json;
    expect((await admin('POST', `/clients/${desk.client_id}/verify-ownership`, { account: 'a@b.c' })).status).toBe(400);
  });
});

describe('client deletion (by hand and of unused clients), restore within 30 days, deleted_client after', () => {
  const authorize = (id: string) =>
    playBrowser(`${mock.url}/o/oauth2/v2/auth?client_id=${id}&redirect_uri=${encodeURIComponent('http://127.0.0.1:5000/')}&response_type=code&scope=email`);

  it('active → deleted by hand → restored → deleted → 30 days → deleted_client for good', async () => {
    const c = (await create({ type: 'desktop', name: 'Short-lived' })).json;
    const rt = await grant(c.client_id);
    const token = () =>
      postForm(`${mock.url}/token`, { grant_type: 'refresh_token', client_id: c.client_id, client_secret: c.client_secret, refresh_token: rt });
    expect((await token()).status).toBe(200);
    expect((await admin('DELETE', `/clients/${c.client_id}`)).json).toMatchObject({ status: 'deleted', deleted_by: 'manual' });
    expect((await admin('DELETE', `/clients/${c.client_id}`)).status).toBe(409);
    expect((await admin('PATCH', `/clients/${c.client_id}`, { name: 'x' })).status).toBe(409);
    expect((await authorize(c.client_id)).page).toContain('deleted_client');
    expect((await token()).json.error).toBe('deleted_client');
    expect((await admin('POST', `/clients/${c.client_id}/restore`)).status).toBe(200);
    expect((await admin('GET', `/clients/${c.client_id}`)).json).toMatchObject({ status: 'active', deleted_at: null });
    expect((await token()).status).toBe(200);
    expect((await authorize(c.client_id)).pageStatus).toBe(200);

    await admin('DELETE', `/clients/${c.client_id}`);
    mock.clock.advance(29 * DAY);
    expect((await admin('GET', `/clients/${c.client_id}`)).json.status).toBe('deleted');
    mock.clock.advance(1 * DAY);
    expect((await admin('GET', `/clients/${c.client_id}`)).json.status).toBe('deleted_permanently');
    const late = await admin('POST', `/clients/${c.client_id}/restore`);
    expect(late.status).toBe(400);
    expect(late.json.error).toBe('deleted_client');
    expect((await token()).json.error).toBe('deleted_client');
    expect((await authorize(c.client_id)).page).toContain('more than 30 days');
  });

  it('unused clients are deleted automatically after 180 days without use; restorable for 30 days from then', async () => {
    const idle = (await create({ type: 'desktop', name: 'Idle' })).json;
    const busy = (await create({ type: 'mobile_b', name: 'Busy', bundle_id: 'com.example.busy' })).json;
    const rt = await grant(busy.client_id);
    mock.clock.advance(100 * DAY);
    expect((await refresh(busy.client_id, rt)).status).toBe(200); // a use at day 100
    mock.clock.advance(80 * DAY); // day 180
    const list = (await admin('GET', '/clients')).json.clients as any[];
    const idleNow = list.find((c) => c.client_id === idle.client_id);
    expect(idleNow).toMatchObject({ status: 'deleted', deleted_by: 'unused' });
    expect(Date.parse(idleNow.deleted_at) - Date.parse(idleNow.created_at)).toBe(180 * DAY);
    expect(list.find((c) => c.client_id === busy.client_id).status).toBe('active');
    // The mock's own client is never deleted automatically.
    expect(list.find((c) => c.client_id === DEFAULT_CLIENT_ID).status).toBe('active');
    expect((await authorize(idle.client_id)).page).toContain('deleted_client');

    // Restored: counts as used now, so the next sweep keeps it.
    expect((await admin('POST', `/clients/${idle.client_id}/restore`)).status).toBe(200);
    expect((await admin('POST', '/sweep')).json.deleted).not.toContain(idle.client_id);
    expect((await admin('GET', `/clients/${idle.client_id}`)).json.status).toBe('active');

    // The busy one goes 180 days after its last use (day 280), found by the token endpoint itself.
    mock.clock.advance(100 * DAY);
    const gone = await refresh(busy.client_id, rt);
    expect(gone.status).toBe(401);
    expect(gone.json.error).toBe('deleted_client');
    const b = (await admin('GET', `/clients/${busy.client_id}`)).json;
    expect(b).toMatchObject({ status: 'deleted', deleted_by: 'unused' });
    // 30 days after the automatic deletion: beyond restore.
    mock.clock.advance(30 * DAY);
    expect((await admin('POST', `/clients/${busy.client_id}/restore`)).json.error).toBe('deleted_client');
  });
});

describe('the console API never answers 500 to a client mistake', () => {
  it('every admin route × method × malformed body and odd ids is a 2xx or 4xx', async () => {
    const real = (await create({ type: 'mobile_b', name: 'Fuzz', bundle_id: 'com.example.fuzz', team_id: 'ABCDE12345' })).json.client_id;
    const ids = [real, DEFAULT_CLIENT_ID, '__proto__', 'constructor', '%00', '%E0%A4%A', 'x'.repeat(3000), 'rcv_000000000000'];
    const paths = [
      '/clients',
      '/clients/ID',
      '/clients/ID/restore',
      '/clients/ID/integrity',
      '/clients/ID/metrics',
      '/clients/ID/integrity-token',
      '/clients/ID/verify-ownership',
      '/sweep',
      '/store',
      '/store/apps',
      '/store/items',
      '/events',
      '/events/deliver',
      '/events/receivers',
      '/events/receivers/ID',
    ];
    const bodies: Array<[string | undefined, string]> = [
      [undefined, ''],
      ['application/json', '{}'],
      ['application/json', '[]'],
      ['application/json', 'null'],
      ['application/json', '"x"'],
      ['application/json', '{"nope'],
      ['application/json', '{"action":1,"account":[],"url":{},"event":null,"user":5,"type":{"a":1},"name":[1],"events":"x","admins":[1],"item_id":7}'],
      ['application/json', '{"__proto__":{"x":1},"constructor":1,"type":"desktop","name":"n"}'],
      [
        'application/json',
        '{"action":"enable","account":"a@b.c","url":"http://127.0.0.1:1/","client_id":"__proto__","event":"sessions-revoked","user":"__proto__"}',
      ],
      ['text/plain', 'hello'],
      ['application/x-www-form-urlencoded', 'a=b&type=desktop'],
    ];
    let sent = 0;
    for (const p of paths) {
      for (const id of p.includes('ID') ? ids : [undefined]) {
        const path = id === undefined ? p : p.replace('ID', id);
        for (const method of ['GET', 'POST', 'PATCH', 'DELETE', 'PUT'] as const) {
          for (const [type, body] of method === 'GET' || method === 'DELETE' ? bodies.slice(0, 1) : bodies) {
            const res = await request(`${mock.url}/oauth2/mock${path}`, {
              method,
              headers: type ? { 'content-type': type } : {},
              body: type ? body : undefined,
            });
            const text = await res.body.text();
            sent++;
            expect(res.statusCode, `${method} ${path.slice(0, 80)} ${body}: ${text.slice(0, 200)}`).toBeLessThan(500);
          }
        }
      }
    }
    expect(sent).toBeGreaterThan(2000);
  }, 180_000);
});
