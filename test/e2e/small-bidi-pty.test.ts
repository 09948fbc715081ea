import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { requireProgram } from '../helpers/e2e.js';
import { runBin } from '../helpers/bin.js';
import { startMock, trackerEnv, type TestState } from '../helpers/mock.js';
import { PtySession, SCRIPT } from '../helpers/pty.js';

/**
 * Issue 27, item 10e: a server's text holding bidirectional controls (U+202E RIGHT-TO-LEFT OVERRIDE and
 * the rest of the "Trojan Source" set) is shown as <U+202E> on a real terminal (a table, a record, an
 * error, --json as \u202e escapes), like the other control characters; piped, the data is left as sent.
 */
const hasScript = requireProgram('script (util-linux, for the pty tests)', SCRIPT);
const BIDI = ['\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069', '\u200e', '\u200f', '\u061c'];
const ANY_BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
const NAME = `invoice${BIDI.join('')}fdp.exe`;

let mock: Awaited<ReturnType<typeof startMock>>;
let dir: string;
let env: NodeJS.ProcessEnv;
let id: number;
const sessions: PtySession[] = [];
afterEach(() => {
  for (const s of sessions.splice(0)) s.kill();
});
async function onTerminal(args: string[]) {
  const s = PtySession.opsctl(args, { env, cols: 400 });
  sessions.push(s);
  const code = await s.exitCode();
  return { code, text: s.text };
}

beforeAll(async () => {
  mock = await startMock({ services: ['tracker'] });
  dir = mkdtempSync(join(tmpdir(), 'opsctl-small-bidi-'));
  env = { ...trackerEnv(mock, join(dir, 'config')), NO_COLOR: '1' };
  const made = await runBin(['tracker', 'labels', 'create', '--name', 'plain', '--json'], { env });
  id = (JSON.parse(String(made.stdout)) as { id: number }).id;
  await mock.store.write((s: TestState) => {
    s.tracker.labels.find((l: { id: number }) => l.id === id).name = NAME;
  });
});
afterAll(async () => {
  await mock.close();
  rmSync(dir, { recursive: true, force: true });
});

describe.runIf(hasScript)('bidi controls on a real terminal are shown, not obeyed', () => {
  it('in a table, a record and --json', async () => {
    const list = await onTerminal(['tracker', 'labels', 'list']);
    expect(list.code).toBe(0);
    expect(list.text).not.toMatch(ANY_BIDI);
    expect(list.text).toContain('invoice<U+202A><U+202B><U+202C><U+202D><U+202E><U+2066><U+2067><U+2068><U+2069><U+200E><U+200F><U+061C>fdp.exe');
    const get = await onTerminal(['tracker', 'labels', 'get', String(id)]);
    expect(get.text).not.toMatch(ANY_BIDI);
    expect(get.text).toContain('invoice<U+202A>');
    const json = await onTerminal(['tracker', 'labels', 'get', String(id), '--json']);
    expect(json.text).not.toMatch(ANY_BIDI);
    expect(json.text).toContain('invoice\\u202a\\u202b\\u202c\\u202d\\u202e');
  });

  it("in a server's error message", async () => {
    mock.inject({ method: 'GET', path: '/api/v3/labels', status: 422, message: `bad \u202eexe.txt`, times: 1 });
    const r = await onTerminal(['tracker', 'labels', 'list']);
    expect(r.code).toBe(1);
    expect(r.text).toContain('bad <U+202E>exe.txt');
    expect(r.text).not.toMatch(ANY_BIDI);
  });

  it('piped, the data is left as sent', async () => {
    const r = await runBin(['tracker', 'labels', 'list'], { env });
    expect(String(r.stdout)).toContain(NAME);
    const j = await runBin(['tracker', 'labels', 'get', String(id), '--json'], { env });
    expect((JSON.parse(String(j.stdout)) as { name: string }).name).toBe(NAME);
  });
});
