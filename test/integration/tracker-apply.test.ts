import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { useTrackerMock } from '../helpers/tracker.js';
import type { TestState } from '../helpers/mock.js';

const t = useTrackerMock((tracker) => {
  tracker.labels = [];
  tracker.categories = [];
});

const writesOf = t.writes;
const listsOf = () => t.mock.requests.filter((r) => r.method === 'GET');
const file = t.file;

const YAML = `labels:
  - name: bug
    color: "#d73a4a"
    description: Something is broken
  - name: feature
    color: "#0e8a16"
  - name: wontfix
    archived: true
`;

describe('tracker labels apply', () => {
  it('plans, applies with exactly 1 list + k writes, and a second run makes no writes', async () => {
    const f = file('labels.yaml', YAML);
    const dry = await runCli(['tracker', 'labels', 'apply', '-f', f, '--dry-run'], { env: t.env });
    expect(dry.code).toBe(0);
    expect(
      dry.stdout
        .trim()
        .split('\n')
        .map((l) => l.split('\t').slice(0, 2).join(' ')),
    ).toEqual(['create bug', 'create feature', 'create wontfix', 'archive wontfix']);
    expect(dry.stderr).toContain('plan for labels: 3 to create, 0 to update, 1 to archive, 0 to delete, 0 unchanged');
    expect(writesOf()).toHaveLength(0);
    expect(listsOf()).toHaveLength(1);

    t.mock.requests.length = 0;
    const first = await runCli(['tracker', 'labels', 'apply', '-f', f], { env: t.env });
    expect(first.code).toBe(0);
    expect(listsOf()).toHaveLength(1);
    expect(writesOf()).toHaveLength(4);
    const labels = await t.mock.store.read((s: TestState) => s.tracker.labels);
    expect(labels.map((l: any) => [l.name, l.color, l.archived])).toEqual([
      ['bug', '#d73a4a', false],
      ['feature', '#0e8a16', false],
      ['wontfix', null, true],
    ]);

    t.mock.requests.length = 0;
    const second = await runCli(['tracker', 'labels', 'apply', '-f', f], { env: t.env });
    expect(second.code).toBe(0);
    expect(second.stderr).toContain('nothing to do');
    expect(writesOf()).toHaveLength(0);
    expect(t.mock.requests).toHaveLength(1);
  });

  it('updates only what changed, leaves unlisted labels alone, and deletes them with --prune', async () => {
    await runCli(['tracker', 'labels', 'apply', '-f', file('a.yaml', YAML)], { env: t.env });
    await runCli(['tracker', 'labels', 'create', '--name', 'stray'], { env: t.env });
    t.mock.requests.length = 0;
    const changed = file('b.yaml', YAML.replace('#0e8a16', '#123456'));
    const r = await runCli(['tracker', 'labels', 'apply', '-f', changed, '--json'], { env: t.env });
    expect(r.code).toBe(0);
    const out = r.json();
    expect(out.counts).toEqual({ create: 0, update: 1, archive: 0, delete: 0, unchanged: 2 });
    expect(out.unlisted).toEqual(['stray']);
    expect(writesOf().map((w) => w.method)).toEqual(['PUT']);

    t.mock.requests.length = 0;
    const pruned = await runCli(['tracker', 'labels', 'apply', '-f', changed, '--prune', '--yes'], { env: t.env });
    expect(pruned.code).toBe(0);
    expect(writesOf().map((w) => w.method)).toEqual(['DELETE']);
    expect((await t.mock.store.read((s: TestState) => s.tracker.labels)).map((l: any) => l.name)).not.toContain('stray');
  });

  it('reads JSON from stdin with -f -', async () => {
    const r = await runCli(['tracker', 'labels', 'apply', '-f', '-'], { env: t.env, stdin: JSON.stringify([{ name: 'from-stdin', color: '#000000' }]) });
    expect(r.code).toBe(0);
    expect((await t.mock.store.read((s: TestState) => s.tracker.labels)).map((l: any) => l.name)).toEqual(['from-stdin']);
  });

  it('exits 3 with a summary when only part applied, and a re-run finishes the job', async () => {
    const f = file('labels.yaml', YAML);
    t.mock.inject({ method: 'POST', path: '/api/v3/labels', status: 422, times: 1, message: 'injected refusal' });
    const r = await runCli(['tracker', 'labels', 'apply', '-f', f], { env: t.env });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/applied, 1 failed/);
    expect(r.stderr).toContain('injected refusal');
    t.mock.requests.length = 0;
    const again = await runCli(['tracker', 'labels', 'apply', '-f', f], { env: t.env });
    expect(again.code).toBe(0);
    expect(writesOf().length).toBeGreaterThanOrEqual(1);
    t.mock.requests.length = 0;
    expect((await runCli(['tracker', 'labels', 'apply', '-f', f], { env: t.env })).code).toBe(0);
    expect(writesOf()).toHaveLength(0);
  });

  it('reports the summary as JSON on stderr with --json', async () => {
    t.mock.inject({ method: 'POST', path: '/api/v3/labels', status: 422, times: 1 });
    const r = await runCli(['tracker', 'labels', 'apply', '-f', file('l.yaml', YAML), '--json'], { env: t.env });
    expect(r.code).toBe(3);
    const err = JSON.parse(r.stderr.slice(r.stderr.indexOf('{')));
    expect(err.error).toMatchObject({ code: 'partial', summary: { planned: 4, failed: [expect.objectContaining({ action: 'create', status: 422 })] } });
  });

  it('rejects a bad file before any request, naming the item and field', async () => {
    const bad = await runCli(['tracker', 'labels', 'apply', '-f', file('bad.yaml', 'labels:\n  - name: x\n    color: red\n')], { env: t.env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('labels[0].color: is not a hex colour');
    const dup = await runCli(['tracker', 'labels', 'apply', '-f', file('dup.yaml', 'labels:\n  - name: x\n  - name: X\n')], { env: t.env });
    expect(dup.code).toBe(2);
    expect(dup.stderr).toContain('listed twice');
    const unknown = await runCli(['tracker', 'labels', 'apply', '-f', file('u.yaml', '- name: x\n  colour: "#ffffff"\n')], { env: t.env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('labels[0].colour: unknown field');
    const bare = await runCli(['tracker', 'labels', 'apply', '-f', file('bare.yaml', 'labels:\n  - name: x\n    color: #ff0000\n')], { env: t.env });
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('bare.yaml:3: unquoted colour');
    const missing = await runCli(['tracker', 'labels', 'apply', '-f', join(t.dir, 'nope.yaml')], { env: t.env });
    expect(missing.code).toBe(2);
    expect(t.mock.requests).toHaveLength(0);
  });

  it('reports every problem of the file at once, 0-based item paths like labels apply', async () => {
    const text =
      'labels:\n  - name: a\n    color: red\n  - color: "#ffffff"\n  - name: c\n    colour: x\n    description: ' + 'd'.repeat(1100) + '\n  - name: A\n';
    const r = await runCli(['tracker', 'labels', 'apply', '-f', file('many.yaml', text)], { env: t.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('many.yaml: 5 problems:');
    for (const p of [
      'labels[0].color: is not a hex colour',
      'labels[1].name: required',
      'labels[2].colour: unknown field',
      'labels[2].description: must be at most',
      'labels[3].name: "A" is listed twice (also labels[0])',
    ]) {
      expect(r.stderr).toContain(p);
    }
    expect(t.mock.requests).toHaveLength(0);
  });

  it('a YAML syntax error names the line, the column and what was expected, never quoting the file (issue 27)', async () => {
    const r = await runCli(['tracker', 'labels', 'apply', '-f', file('syntax.yaml', 'labels:\n  - name: a\n    description: "open\n  - name: b\n')], {
      env: t.env,
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/line \d+, column \d+/);
    expect(r.stderr).toContain('expected a closing quote');
    expect(r.stderr).not.toContain('name: b');
    expect(r.stderr).not.toContain('open');
  });
});

describe('tracker categories apply', () => {
  it('creates, then updates and prunes categories', async () => {
    const f = file('c.yaml', 'categories:\n  - name: Infra\n    color: "#336699"\n  - name: Growth\n');
    expect((await runCli(['tracker', 'categories', 'apply', '-f', f], { env: t.env })).code).toBe(0);
    expect(writesOf()).toHaveLength(2);
    t.mock.requests.length = 0;
    const g = file('d.yaml', 'categories:\n  - name: Infra\n    color: "#000000"\n');
    const r = await runCli(['tracker', 'categories', 'apply', '-f', g, '--prune', '--yes'], { env: t.env });
    expect(r.code).toBe(0);
    expect(writesOf().map((w) => w.method)).toEqual(['PUT', 'DELETE']);
    t.mock.requests.length = 0;
    expect((await runCli(['tracker', 'categories', 'apply', '-f', g, '--prune', '--yes'], { env: t.env })).code).toBe(0);
    expect(writesOf()).toHaveLength(0);
  });
});
