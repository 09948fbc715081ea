import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { seeded, type Rng } from '../helpers/fuzz.js';

/**
 * `mock serve --state FILE` under kill -9, fuzzed (issue 49): rounds of random requests, valid and
 * invalid (creates, renames and deletes of tracker labels, security-event receivers and console clients;
 * reads that once filled in state in memory only; unauthenticated and refused writes; bursts answered by
 * one group commit), each round ended by SIGKILL of the server (now and then while a burst is in flight, or
 * a clean SIGTERM). After each restart the server must start (every journal line it wrote replays) and
 * hold exactly what it acknowledged: every answered write, no refused one; a write cut off by the kill
 * may be there or not. OPSCTL_FUZZ_SEED=N repeats a run, OPSCTL_FUZZ_ROUNDS=N makes it longer.
 */
const SEED = Number(process.env.OPSCTL_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const ROUNDS = Number(process.env.OPSCTL_FUZZ_ROUNDS ?? 10);
const CLIENT = 'opsctl-desktop.apps.mock';
const dir = mkdtempSync(join(tmpdir(), 'opsctl-journal-fuzz-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Model {
  labels: Map<number, { name: string; color: string | null }>;
  receivers: Map<string, string>;
  clients: Map<string, boolean>;
  /** Label names a write cut off by the kill may or may not have made. */
  maybe: Set<string>;
}

type Server = { child: ReturnType<typeof runBin>; url: string; token: string };

async function start(state: string): Promise<Server> {
  const child = runBin(['mock', 'serve', '--json', '--port', '0', '--state', state, '--tracker-rate-limit', '1000000/1m']);
  const info = await new Promise<{ url: string; tracker_token: string }>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const line = out.split('\n').find((l) => l.startsWith('{') && out.includes('\n'));
      if (line) resolve(JSON.parse(line) as { url: string; tracker_token: string });
    });
    void child.then((r) => reject(new Error(`mock serve exited ${r.exitCode} (seed ${SEED}): ${String(r.stderr)}`)));
  });
  return { child, url: info.url, token: info.tracker_token };
}

async function call(s: Server, method: string, path: string, body?: unknown, auth = true): Promise<{ status: number; json: unknown }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (auth) headers['tracker-token'] = s.token;
  const r = await fetch(`${s.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, json: text ? (JSON.parse(text) as unknown) : undefined };
}

let serial = 0;
const fresh = (what: string) => `${what}-${SEED}-${serial++}`;

/** One random request (valid or not); the model changes only with what the server acknowledged. */
async function step(s: Server, m: Model, rng: Rng, log: string[]): Promise<void> {
  const labelIds = [...m.labels.keys()];
  const receiverIds = [...m.receivers.keys()];
  const clientIds = [...m.clients.keys()].filter((id) => !m.clients.get(id));
  const kind = rng.int(14);
  const expectStatus = (what: string, got: number, ok: number[]) => {
    log.push(`${what} -> ${got}`);
    expect(ok, `${what} (seed ${SEED}): ${log.slice(-6).join(' | ')}`).toContain(got);
  };
  if (kind <= 2) {
    const name = fresh('label');
    const color = rng.int(2) ? `#${rng.int(0xffffff).toString(16).padStart(6, '0')}` : null;
    const r = await call(s, 'POST', '/api/v3/labels', { name, ...(color ? { color } : {}) });
    expectStatus(`create ${name}`, r.status, [201]);
    m.labels.set((r.json as { id: number }).id, { name, color });
  } else if (kind === 3) {
    const bad = rng.pick([{ name: '' }, { name: fresh('c'), color: 'red' }, { name: m.labels.values().next().value?.name ?? '' }, { nmae: 'x' }]);
    expectStatus(`create invalid ${JSON.stringify(bad)}`, (await call(s, 'POST', '/api/v3/labels', bad)).status, [400, 422]);
  } else if (kind === 4 && labelIds.length) {
    const id = rng.pick(labelIds);
    const name = fresh('renamed');
    expectStatus(`rename ${id}`, (await call(s, 'PUT', `/api/v3/labels/${id}`, { name })).status, [200]);
    m.labels.get(id)!.name = name;
  } else if (kind === 5) {
    const known = labelIds.length > 0 && rng.int(2) === 0;
    const id = known ? rng.pick(labelIds) : 900_000 + rng.int(1000);
    expectStatus(`delete label ${id}`, (await call(s, 'DELETE', `/api/v3/labels/${id}`)).status, known ? [204] : [404]);
    m.labels.delete(id);
  } else if (kind === 6) {
    expectStatus('create without a token', (await call(s, 'POST', '/api/v3/labels', { name: fresh('anon') }, false)).status, [401]);
  } else if (kind === 7) {
    const path = rng.pick(['/oauth2/mock/events/receivers', '/oauth2/mock/store', '/oauth2/mock/events', '/oauth2/mock/clients', '/api/v3/labels']);
    expectStatus(`GET ${path}`, (await call(s, 'GET', path)).status, [200]);
  } else if (kind === 8) {
    const url = `http://127.0.0.1:9/${fresh('events')}`;
    const r = await call(s, 'POST', '/oauth2/mock/events/receivers', { url, client_id: CLIENT, events: ['sessions-revoked'] });
    expectStatus(`add receiver ${url}`, r.status, [201]);
    m.receivers.set((r.json as { id: string }).id, url);
  } else if (kind === 9) {
    const bad = rng.pick([{ url: 'not a url', client_id: CLIENT }, { url: 'http://127.0.0.1:9/x', client_id: 'nobody.apps.mock' }, { client_id: CLIENT }]);
    expectStatus(`add receiver invalid`, (await call(s, 'POST', '/oauth2/mock/events/receivers', bad)).status, [400, 404]);
  } else if (kind === 10) {
    const known = receiverIds.length > 0 && rng.int(2) === 0;
    const id = known ? rng.pick(receiverIds) : `rcv_${fresh('none')}`;
    expectStatus(`remove receiver ${id}`, (await call(s, 'DELETE', `/oauth2/mock/events/receivers/${id}`)).status, known ? [200] : [404]);
    m.receivers.delete(id);
  } else if (kind === 11) {
    const valid = rng.int(3) > 0;
    const r = await call(s, 'POST', '/oauth2/mock/clients', valid ? { type: 'desktop', name: fresh('app') } : { type: 'toaster', name: 'x' });
    expectStatus(`create client (${valid ? 'valid' : 'invalid'})`, r.status, valid ? [201] : [400]);
    if (valid) m.clients.set((r.json as { client_id: string }).client_id, false);
  } else if (kind === 12) {
    const known = clientIds.length > 0 && rng.int(2) === 0;
    const id = known ? rng.pick(clientIds) : `${fresh('gone')}.apps.mock`;
    expectStatus(`delete client ${id}`, (await call(s, 'DELETE', `/oauth2/mock/clients/${id}`)).status, known ? [200] : [404]);
    if (known) m.clients.set(id, true);
  } else {
    // a burst: answered together (one append, one fdatasync)
    const names = Array.from({ length: 2 + rng.int(5) }, () => fresh('burst'));
    const got = await Promise.all(names.map((name) => call(s, 'POST', '/api/v3/labels', { name })));
    for (const [i, r] of got.entries()) {
      expectStatus(`burst ${names[i]}`, r.status, [201]);
      m.labels.set((r.json as { id: number }).id, { name: names[i]!, color: null });
    }
  }
}

/** Creates that may still be in flight when the kill comes: acknowledged ones go into the model, the others may or may not be there. */
async function inFlight(s: Server, m: Model, rng: Rng): Promise<void> {
  const names = Array.from({ length: 3 + rng.int(6) }, () => fresh('flight'));
  const sent = names.map((name) =>
    call(s, 'POST', '/api/v3/labels', { name }).then(
      (r) => ({ name, r }),
      () => ({ name, r: undefined }),
    ),
  );
  // the kill lands once the first answer is in: the rest are cut off somewhere on their way
  await Promise.race(sent);
  s.child.kill('SIGKILL');
  for (const { name, r } of await Promise.all(sent)) {
    if (r?.status === 201) m.labels.set((r.json as { id: number }).id, { name, color: null });
    else m.maybe.add(name);
  }
}

/** The server's state against the model: every acknowledged write, no refused one (a cut-off create adopted either way). */
async function check(s: Server, m: Model, round: number): Promise<void> {
  const where = `round ${round}, seed ${SEED}`;
  const labels = (await call(s, 'GET', '/api/v3/labels')).json as Array<{ id: number; name: string; color: string | null }>;
  for (const l of labels) if (m.maybe.has(l.name)) m.labels.set(l.id, { name: l.name, color: l.color });
  m.maybe.clear();
  const seeded = labels.filter((l) => !l.name.includes(`-${SEED}-`));
  expect(new Map(labels.filter((l) => !seeded.includes(l)).map((l) => [l.id, { name: l.name, color: l.color }])), where).toEqual(m.labels);
  const receivers = ((await call(s, 'GET', '/oauth2/mock/events/receivers')).json as { receivers: Array<{ id: string; url: string }> }).receivers;
  expect(new Map(receivers.map((r) => [r.id, r.url])), where).toEqual(m.receivers);
  const clients = ((await call(s, 'GET', '/oauth2/mock/clients')).json as { clients: Array<{ client_id: string; status: string }> }).clients;
  const ours = clients.filter((c) => m.clients.has(c.client_id));
  expect(new Map(ours.map((c) => [c.client_id, c.status !== 'active'])), where).toEqual(m.clients);
  expect(
    clients.filter((c) => c.client_id.includes(`-${SEED}-`) && !m.clients.has(c.client_id)),
    where,
  ).toEqual([]);
}

describe('mock serve --state under kill -9 (fuzz)', () => {
  it(`every acknowledged write survives, nothing refused appears, every journal line replays (seed ${SEED}, ${ROUNDS} rounds)`, async () => {
    const state = join(dir, 'state.json');
    const rng = seeded(SEED);
    const model: Model = { labels: new Map(), receivers: new Map(), clients: new Map(), maybe: new Set() };
    let server = await start(state);
    const log: string[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const steps = 3 + rng.int(14);
      for (let i = 0; i < steps; i++) await step(server, model, rng, log);
      const end = rng.int(6);
      if (end === 0) {
        server.child.kill('SIGTERM');
        expect((await server.child).exitCode, `clean stop, seed ${SEED}`).toBe(0);
      } else if (end === 1) await inFlight(server, model, rng);
      else server.child.kill('SIGKILL');
      await server.child;
      log.push(`-- ${end === 0 ? 'SIGTERM' : 'SIGKILL'} after round ${round}`);
      server = await start(state);
      await check(server, model, round);
    }
    server.child.kill('SIGTERM');
    await server.child;
    // nothing was ever refused or set aside: no salvage was needed
    expect(readdirSync(dir).filter((f) => /\.(bad|rejected)/.test(f))).toEqual([]);
    expect(existsSync(`${state}.journal`), 'a clean stop folds the journal into the snapshot').toBe(false);
  }, 600_000);
});
