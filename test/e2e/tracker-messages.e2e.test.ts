import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { startMock, trackerEnv } from '../helpers/mock.js';

/**
 * Issue 19, item 8 (tracker and the shared core), through the built binary against the tracker mock:
 * type messages, 0-based import rows, one message per field, parse errors in the "X message + hint"
 * shape, and plurals. Every refusal here exits 2 and sends no write.
 */
let mock: Awaited<ReturnType<typeof startMock>>;
let dir: string;
let env: NodeJS.ProcessEnv;

async function run(...args: string[]) {
  const r = await runBin(args, { env });
  return { code: r.exitCode, stdout: String(r.stdout), stderr: String(r.stderr) };
}
const writes = () => mock.requests.filter((q) => q.method !== 'GET');

beforeAll(async () => {
  mock = await startMock({ services: ['tracker'] });
  dir = mkdtempSync(join(tmpdir(), 'opsctl-messages-'));
  env = trackerEnv(mock, join(dir, 'config'));
});
afterAll(async () => {
  await mock.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('messages (built binary)', () => {
  it('a JSON field of the wrong type gets a type message, not "shorten it"', async () => {
    mock.requests.length = 0;
    const top = await run('tracker', 'labels', 'create', '--data', '{"name": 5}');
    expect(top.code).toBe(2);
    expect(top.stderr).toBe('X --name: must be a string');
    const nested = await run('tracker', 'stories', 'create', '--data', '{"name": "ok", "labels": [{"name": 3}]}');
    expect(nested.code).toBe(2);
    expect(nested.stderr).toBe('X --data labels[0].name: must be a string (got a number)');
    // a string that is too long still gets the length fix
    const long = await run('tracker', 'labels', 'create', '--name', 'x'.repeat(129));
    expect(long.stderr).toContain('shorten it to 128 characters or fewer');
    expect(writes()).toEqual([]);
  });

  it('stories import numbers rows 0-based like apply (a CSV row also gives its line)', async () => {
    const yaml = join(dir, 'stories.yaml');
    writeFileSync(yaml, 'stories:\n  - external_id: a\n    name: 5\n  - external_id: b\n    name: B\n');
    const y = await run('tracker', 'stories', 'import', '-f', yaml);
    expect(y.code).toBe(2);
    expect(y.stderr).toContain(`${yaml}: stories[0].name: must be a string`);
    const csv = join(dir, 'stories.csv');
    writeFileSync(csv, 'external_id,name\nc1,First\nc1,Second\n');
    const c = await run('tracker', 'stories', 'import', '-f', csv);
    expect(c.code).toBe(2);
    expect(c.stderr).toContain('stories[1] (line 3): external_id "c1" is also used by stories[0] (line 2)');
  });

  it("apply names one problem per field, in the file's order", async () => {
    const file = join(dir, 'labels.yaml');
    writeFileSync(file, 'labels:\n  - name: 5\n  - color: 5\n');
    const r = await run('tracker', 'labels', 'apply', '-f', file);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file}: 3 problems:\n  labels[0].name: must be a string\n  labels[1].name: required\n  labels[1].color: must be a string`);
  });

  it('option-parsing errors have the shape of every other error: "X message" and a hint', async () => {
    const unknown = await run('tracker', 'labels', 'list', '--colour');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe("X unknown option '--colour'\n  see: opsctl tracker labels list --help");
    const missing = await run('tracker', 'labels', 'apply');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe("X required option '-f, --file <path|->' not specified\n  see: opsctl tracker labels apply --help");
    const typo = await run('tracker', 'labels', 'lisst');
    expect(typo.code).toBe(2);
    expect(typo.stderr).toBe("X unknown command 'lisst'\n  did you mean list? (see: opsctl tracker labels --help)");
  });

  it('says "1 change" and "1 write", not "1 change(s)"', async () => {
    const file = join(dir, 'one.yaml');
    writeFileSync(file, 'labels:\n  - name: only-one\n');
    const dry = await run('tracker', 'labels', 'apply', '-f', file, '--dry-run');
    expect(dry.stderr).toContain('dry run: 1 write planned, none made');
    const done = await run('tracker', 'labels', 'apply', '-f', file);
    expect(done.code).toBe(0);
    expect(done.stderr).toContain('applied 1 change to labels');
    expect(done.stderr).not.toContain('(s)');
  });
});
