import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { startMock, trackerEnv } from '../helpers/mock.js';

/**
 * Round trip (issue 19, item 3), built binary against two tracker mocks: `export` prints the apply
 * format; apply takes export's, list --json's and get --json's output as they are; export from one
 * workspace, apply into another, export again: the same text. Renames keep a label's id and stories.
 */
let a: Awaited<ReturnType<typeof startMock>>;
let b: Awaited<ReturnType<typeof startMock>>;
let dir: string;
let envA: NodeJS.ProcessEnv;
let envB: NodeJS.ProcessEnv;

async function run(args: string[], env: NodeJS.ProcessEnv, input?: string) {
  const r = await runBin(args, { env, input });
  return { code: r.exitCode, stdout: String(r.stdout), stderr: String(r.stderr) };
}
async function ok(args: string[], env: NodeJS.ProcessEnv, input?: string) {
  const r = await run(args, env, input);
  expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r;
}

beforeAll(async () => {
  a = await startMock({ services: ['tracker'] });
  b = await startMock({ services: ['tracker'] });
  dir = mkdtempSync(join(tmpdir(), 'opsctl-roundtrip-'));
  envA = trackerEnv(a, join(dir, 'a'));
  envB = trackerEnv(b, join(dir, 'b'));
  await ok(['tracker', 'labels', 'create', '--name', 'bug', '--color', '#D73A4A', '--description', 'Something is broken'], envA);
  await ok(['tracker', 'labels', 'create', '--name', 'Needs review', '--external-id', 'ext-7'], envA);
  await ok(['tracker', 'labels', 'create', '--name', 'old-stuff'], envA);
  await ok(['tracker', 'labels', 'update', 'old-stuff', '--archived'], envA);
  await ok(['tracker', 'categories', 'create', '--name', 'Infra', '--color', '#336699'], envA);
  await ok(['tracker', 'categories', 'create', '--name', 'Growth'], envA);
});
afterAll(async () => {
  await a.close();
  await b.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('export and apply round trip (built binary, two mocks)', () => {
  it('labels export prints the apply format: YAML by default, the same mapping with --json', async () => {
    const yaml = (await ok(['tracker', 'labels', 'export'], envA)).stdout;
    expect(yaml).toBe(
      [
        'labels:',
        '  - name: bug',
        '    description: Something is broken',
        '    color: "#D73A4A"',
        '    archived: false',
        '  - name: Needs review',
        '    archived: false',
        '    external_id: ext-7',
        '  - name: old-stuff',
        '    archived: true',
      ].join('\n'),
    );
    const json = JSON.parse((await ok(['tracker', 'labels', 'export', '--json'], envA)).stdout);
    expect(json.labels.map((l: any) => l.name)).toEqual(['bug', 'Needs review', 'old-stuff']);
  });

  it('export | apply --dry-run against the same workspace plans 0 changes; list --json and get --json apply as they are', async () => {
    const yaml = (await ok(['tracker', 'labels', 'export'], envA)).stdout;
    a.requests.length = 0;
    const same = await ok(['tracker', 'labels', 'apply', '-f', '-', '--dry-run'], envA, yaml);
    expect(same.stderr).toContain('0 to create, 0 to update, 0 to archive, 0 to delete, 3 unchanged');
    expect(a.requests.map((q) => `${q.method} ${q.path}`)).toEqual(['GET /api/v3/labels']);

    const list = (await ok(['tracker', 'labels', 'list', '--json'], envA)).stdout;
    const fromList = await ok(['tracker', 'labels', 'apply', '-f', '-', '--dry-run'], envA, list);
    expect(fromList.stderr).toContain('3 unchanged');
    // the server's own fields are named once, not once per record
    expect(fromList.stderr.match(/ignored what the server sets: id, app_url, entity_type, global_id, created_at, updated_at, stats/g)).toHaveLength(1);

    // the issue's own report: description is null in list output for a label without one
    const picked = (await ok(['tracker', 'labels', 'list', '--json=name,color,description,archived'], envA)).stdout;
    const fromPicked = await ok(['tracker', 'labels', 'apply', '-f', '-', '--dry-run'], envA, picked);
    expect(fromPicked.stderr).toContain('3 unchanged');

    const one = (await ok(['tracker', 'labels', 'get', 'bug', '--json'], envA)).stdout;
    const fromGet = await ok(['tracker', 'labels', 'apply', '-f', '-', '--dry-run'], envA, one);
    expect(fromGet.stderr).toContain('1 unchanged');
  });

  it("a misspelt field is still refused (only the server's own fields are ignored)", async () => {
    const r = await run(['tracker', 'labels', 'apply', '-f', '-', '--dry-run'], envA, JSON.stringify([{ name: 'bug', colour: '#ffffff', id: 1 }]));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('labels[0].colour: unknown field');
    expect(r.stderr).not.toContain('labels[0].id');
  });

  it('copies labels and categories to another workspace: export again gives identical files', async () => {
    for (const resource of ['labels', 'categories']) {
      const exported = (await ok(['tracker', resource, 'export'], envA)).stdout;
      const plan = await ok(['tracker', resource, 'apply', '-f', '-', '--dry-run'], envB, exported);
      expect(plan.stderr).toMatch(resource === 'labels' ? /3 to create, 0 to update, 1 to archive/ : /2 to create/);
      await ok(['tracker', resource, 'apply', '-f', '-'], envB, exported);
      const again = (await ok(['tracker', resource, 'export'], envB)).stdout;
      expect(again).toBe(exported);
      const twice = await ok(['tracker', resource, 'apply', '-f', '-'], envB, again);
      expect(twice.stderr).toContain('nothing to do');
    }
  });

  it('renamed_from keeps the label (its id and its stories), and --prune does not delete the old name', async () => {
    const story = JSON.parse(
      (await ok(['tracker', 'stories', 'create', '--name', 'labelled', '--data', '{"labels":[{"name":"bug"}]}', '--json'], envA)).stdout,
    );
    const bug = JSON.parse((await ok(['tracker', 'labels', 'get', 'bug', '--json'], envA)).stdout);
    const file = join(dir, 'renamed.yaml');
    writeFileSync(
      file,
      [
        'labels:',
        '  - name: defect',
        '    renamed_from: [bugs, bug]',
        '    color: "#D73A4A"',
        '    description: Something is broken',
        '  - name: Needs review',
        '  - name: old-stuff',
        '    archived: true',
        '',
      ].join('\n'),
    );
    const dry = await ok(['tracker', 'labels', 'apply', '-f', file, '--prune', '--dry-run'], envA);
    expect(dry.stdout).toMatch(new RegExp(`^update\\tdefect\\t${bug.id}\\trenamed from "bug": name="defect"$`, 'm'));
    expect(dry.stderr).toContain('0 to create, 1 to update, 0 to archive, 0 to delete');
    await ok(['tracker', 'labels', 'apply', '-f', file, '--prune', '--yes'], envA);
    const defect = JSON.parse((await ok(['tracker', 'labels', 'get', 'defect', '--json'], envA)).stdout);
    expect(defect.id).toBe(bug.id);
    const after = JSON.parse((await ok(['tracker', 'stories', 'get', String(story.id), '--json'], envA)).stdout);
    expect(after.label_ids).toContain(bug.id);
    const again = await ok(['tracker', 'labels', 'apply', '-f', file, '--prune', '--yes'], envA);
    expect(again.stderr).toContain('nothing to do');
  });

  it('a rename whose old name is also listed on its own is refused before anything is sent', async () => {
    a.requests.length = 0;
    const r = await run(
      ['tracker', 'labels', 'apply', '-f', '-'],
      envA,
      JSON.stringify({ labels: [{ name: 'x1', renamed_from: 'defect' }, { name: 'defect' }] }),
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('labels[0].renamed_from: "defect" is also listed as labels[1]');
    expect(a.requests).toEqual([]);
  });
});
