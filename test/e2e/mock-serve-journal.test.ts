import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
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
});
