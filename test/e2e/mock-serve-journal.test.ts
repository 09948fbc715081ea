import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { serveUrl } from '../helpers/serve.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'opsctl-serve-journal-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** `opsctl mock serve --state FILE` on a free port; its URL and tracker token. */
async function serve(state: string) {
  const child = runBin(['mock', 'serve', '--json', '--port', '0', '--state', state, '--tracker-rate-limit', '100000/1m']);
  const url = await serveUrl(child);
  const token = (JSON.parse(readFileSync(state, 'utf8')) as { tracker: { token: string } }).tracker.token;
  return { child, url, headers: { 'content-type': 'application/json', 'tracker-token': token } };
}

describe('mock serve --state: the journal', () => {
  it('keeps every acknowledged write through kill -9 of the server', async () => {
    const state = join(dir, 'state.json');
    const first = await serve(state);
    const N = 60;
    // concurrent writes (group commit) and sequential ones: each answered 201 before the kill
    const made = await Promise.all(
      Array.from({ length: N / 2 }, (_, i) =>
        fetch(`${first.url}/api/v3/labels`, { method: 'POST', headers: first.headers, body: JSON.stringify({ name: `par-${i}` }) }).then((r) => r.status),
      ),
    );
    for (let i = 0; i < N / 2; i++) {
      const r = await fetch(`${first.url}/api/v3/labels`, { method: 'POST', headers: first.headers, body: JSON.stringify({ name: `seq-${i}` }) });
      made.push(r.status);
    }
    expect(made).toEqual(Array.from({ length: N }, () => 201));
    first.child.kill('SIGKILL');
    const gone = await first.child;
    expect(gone.signal).toBe('SIGKILL');
    // the writes are in the journal beside the snapshot, not in a rewritten snapshot
    expect(existsSync(`${state}.journal`)).toBe(true);
    expect(readFileSync(state, 'utf8')).not.toContain('seq-0');

    const again = await serve(state);
    try {
      const labels = (await (await fetch(`${again.url}/api/v3/labels?slim=true`, { headers: again.headers })).json()) as Array<{ name: string }>;
      const names = new Set(labels.map((l) => l.name));
      for (let i = 0; i < N / 2; i++) {
        expect(names.has(`par-${i}`)).toBe(true);
        expect(names.has(`seq-${i}`)).toBe(true);
      }
      expect(labels).toHaveLength(N);
    } finally {
      again.child.kill('SIGTERM');
      await again.child;
    }
  }, 180_000);

  it("issue 49's reproduction: a read of the receivers and a refused DELETE, then two labels, kill -9: the restart has both labels", async () => {
    const state = join(dir, 'state.json');
    const first = await serve(state);
    expect((await fetch(`${first.url}/oauth2/mock/events/receivers`)).status).toBe(200);
    expect((await fetch(`${first.url}/oauth2/mock/events/receivers/rcv_nobody`, { method: 'DELETE' })).status).toBe(404);
    for (const name of ['after-404-a', 'after-404-b']) {
      expect((await fetch(`${first.url}/api/v3/labels`, { method: 'POST', headers: first.headers, body: JSON.stringify({ name }) })).status).toBe(201);
    }
    first.child.kill('SIGKILL');
    await first.child;
    expect(readFileSync(`${state}.journal`, 'utf8'), 'the 404 left nothing in the journal').not.toContain('secevents');
    const again = await serve(state);
    try {
      const labels = (await (await fetch(`${again.url}/api/v3/labels`, { headers: again.headers })).json()) as Array<{ name: string }>;
      expect(labels.map((l) => l.name)).toEqual(expect.arrayContaining(['after-404-a', 'after-404-b']));
    } finally {
      again.child.kill('SIGTERM');
      await again.child;
    }
  }, 180_000);

  it('a journal line that cannot be applied: refused naming the writes at stake and the fix; --salvage-journal keeps every other write, names the one set aside', async () => {
    const state = join(dir, 'state.json');
    const first = await serve(state);
    for (const name of ['before', 'after'])
      expect((await fetch(`${first.url}/api/v3/labels`, { method: 'POST', headers: first.headers, body: JSON.stringify({ name }) })).status).toBe(201);
    first.child.kill('SIGKILL');
    await first.child;
    // the poisoned line an older mock wrote (a slice it had made in memory only) between two acknowledged writes
    const lines = readFileSync(`${state}.journal`, 'utf8').split('\n');
    const at = lines.findIndex((l) => l.includes('"after"'));
    lines.splice(at, 0, '[[["oauth","secevents"],"receivers",[]]]');
    writeFileSync(`${state}.journal`, lines.join('\n'));
    const journal = readFileSync(`${state}.journal`, 'utf8');

    const refused = await runBin(['mock', 'serve', '--json', '--port', '0', '--state', state]);
    expect(refused.exitCode).toBe(1);
    const err = JSON.parse(String(refused.stderr).trim().split('\n').pop()!) as { error: { message: string; hint: string } };
    expect(err.error.message).toMatch(/line \d+: a change's path \["oauth","secevents"\] is not in the state \(1 of its \d+ writes cannot be applied/);
    expect(err.error.hint).toContain(`opsctl mock serve --state ${state} --salvage-journal`);
    expect(err.error.hint).toMatch(/would lose all \d+ writes/);
    expect(readFileSync(`${state}.journal`, 'utf8')).toBe(journal);

    const salvaged = runBin(['mock', 'serve', '--json', '--port', '0', '--state', state, '--salvage-journal']);
    const url = await serveUrl(salvaged);
    try {
      const labels = (await (await fetch(`${url}/api/v3/labels`, { headers: first.headers })).json()) as Array<{ name: string }>;
      expect(labels.map((l) => l.name)).toEqual(expect.arrayContaining(['before', 'after']));
      expect(readFileSync(`${state}.journal.bad`, 'utf8')).toBe(journal);
      expect(readFileSync(`${state}.journal.rejected`, 'utf8')).toContain('"text":"[[[\\"oauth\\",\\"secevents\\"],\\"receivers\\",[]]]"');
    } finally {
      salvaged.kill('SIGTERM');
    }
    const done = await salvaged;
    expect(String(done.stderr)).toMatch(
      /--salvage-journal: \d+ of the journal's \d+ writes kept in the state; 1 could not be applied and is set aside in .*journal\.rejected/,
    );
    expect(String(done.stderr)).toContain('a change\'s path ["oauth","secevents"] is not in the state');
  }, 180_000);
});
