import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Agent, type Dispatcher } from 'undici';
import { runCli, tempConfigDir } from '../helpers/cli.js';
import { startMock, type TestState } from '../helpers/mock.js';
import { LABEL_SCOPES, mintToken } from '../helpers/labels.js';

let mock: Awaited<ReturnType<typeof startMock>>;
let cfg: ReturnType<typeof tempConfigDir>;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  mock = await startMock({ services: ['labels'], options: { labels: { maxFields: 4, maxChoices: 5 } } });
  await mock.service('labels');
  const token = await mintToken(mock);
  env = { OPSCTL_LABELS_URL: mock.url, OPSCTL_ACCESS_TOKEN: token };
});
afterAll(async () => {
  await mock.close();
});
beforeEach(async () => {
  cfg = tempConfigDir();
  env = { ...env, OPSCTL_CONFIG_DIR: cfg.dir };
  await mock.store.write((s: TestState) => {
    s.labels.labels = [];
  });
  mock.requests.length = 0;
});
afterEach(() => cfg.cleanup());

const writes = () => mock.requests.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path.replace(/labels\/\w+/, 'labels/ID')}`);
function file(name: string, text: string): string {
  const path = join(cfg.dir, name);
  writeFileSync(path, text);
  return path;
}
const apply = (...argv: string[]) => runCli(['labels', 'apply', ...argv], { env });

const V1 = `
title: Sensitivity
description: How secret a document is
fields:
  - name: Level
    type: selection
    required: true
    choices: [Low, High]
  - name: Review date
    type: date
    dateFormat: SHORT_DATE
  - name: Reviewers
    type: user
    list: 3
permissions:
  - {email: bob@example.com, role: READER}
  - {audience: audiences/default, role: APPLIER}
`;

const V2 = `
title: Sensitivity
description: How secret a document is, from 2027
fields:
  - name: Reviewers
    type: user
    list: 3
  - name: Level
    type: selection
    required: true
    choices:
      - Low
      - {name: Medium, description: Internal only}
      - High
  - name: Notes
    type: text
permissions:
  - {email: bob@example.com, role: EDITOR}
`;

describe('labels apply', () => {
  it('creates, publishes, and a second run sends no writes', async () => {
    const f = file('sensitivity.yaml', V1);
    const first = await apply('-f', f, '--publish');
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('label "Sensitivity" (new)');
    expect(first.stdout).toContain('+ field "Level" (selection: Low, High)');
    expect(first.stdout).toContain('+ permission bob@example.com READER');
    expect(first.stdout).toContain('3 writes: 1 create, 1 permissions:batchUpdate (2), 1 :publish');
    expect(first.stderr).toMatch(/applied .*sensitivity.yaml: labels\/\w+: PUBLISHED, revision 2$/m);
    expect(writes()).toEqual(['POST /v2/labels', 'POST /v2/labels/ID/permissions:batchUpdate', 'POST /v2/labels/ID:publish']);

    const label = (await runCli(['labels', 'list', '--json'], { env })).json()[0];
    expect(label.fields.map((x: any) => x.properties.displayName)).toEqual(['Level', 'Review date', 'Reviewers']);
    expect(label.fields[1].dateOptions.dateFormatType).toBe('SHORT_DATE');
    expect(label.fields[2].userOptions.listOptions).toEqual({ maxEntries: 3 });

    mock.requests.length = 0;
    const second = await apply('-f', f, '--publish');
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('up to date: nothing to send');
    expect(writes()).toEqual([]);
    expect(mock.requests.map((r) => r.path)).toEqual(expect.arrayContaining(['/v2/limits/label', '/v2/labels']));
  });

  it('plans the fewest writes for a change: one guarded :delta and one permissions batch each way', async () => {
    await apply('-f', file('s.yaml', V1), '--publish');
    const f2 = file('s2.yaml', V2);
    mock.requests.length = 0;
    const dry = await apply('-f', f2, '--dry-run');
    expect(dry.code).toBe(0);
    expect(writes()).toEqual([]);
    expect(dry.stderr).toContain('dry run: nothing sent');
    expect(dry.stdout.trimEnd().split('\n')).toEqual([
      expect.stringMatching(/^label "Sensitivity" \(labels\/\w+, revision 2, PUBLISHED\)$/),
      '  ~ label: description',
      '  - field "Review date" (published: disable)',
      '  ~ field "Reviewers": move',
      '  + choice "Medium" in "Level"',
      '  + field "Notes" (text)',
      '  ~ permission bob@example.com: READER → EDITOR',
      '  - permission audiences/default APPLIER',
      '3 writes: 1 :delta with 5 updates (requiredRevisionId 2), 1 permissions:batchUpdate (1), 1 permissions:batchDelete (1)',
    ]);
    const json = await apply('-f', f2, '--dry-run', '--json');
    expect(json.json()).toMatchObject({ applied: false, writes: 3, publish: false });
    expect(json.json().requests[0]).toEqual({
      updateLabel: { properties: { title: 'Sensitivity', description: 'How secret a document is, from 2027' }, updateMask: 'description' },
    });

    mock.requests.length = 0;
    const real = await apply('-f', f2, '--publish', '--yes');
    expect(real.code).toBe(0);
    expect(writes()).toEqual([
      'POST /v2/labels/ID:delta',
      'POST /v2/labels/ID/permissions:batchUpdate',
      'POST /v2/labels/ID/permissions:batchDelete',
      'POST /v2/labels/ID:publish',
    ]);
    const label = (await runCli(['labels', 'list', '--json'], { env })).json()[0];
    expect(label.lifecycle).toEqual({ state: 'PUBLISHED', hasUnpublishedChanges: false });
    expect(label.fields.map((x: any) => `${x.properties.displayName}:${x.lifecycle.state}`)).toEqual([
      'Reviewers:PUBLISHED',
      'Level:PUBLISHED',
      'Review date:DISABLED',
      'Notes:PUBLISHED',
    ]);
    expect(label.fields[1].selectionOptions.choices.map((c: any) => c.properties.displayName)).toEqual(['Low', 'Medium', 'High']);

    mock.requests.length = 0;
    expect((await apply('-f', f2, '--publish')).stdout).toContain('nothing to send');
    expect(writes()).toEqual([]);
  });

  it('refuses a file that breaks limits/label before sending anything', async () => {
    const many = `title: Big\nfields:\n${Array.from({ length: 5 }, (_, i) => `  - {name: F${i}, type: text}`).join('\n')}\n  \n`;
    const r = await apply('-f', file('big.yaml', many));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('breaks limits/label');
    expect(r.stderr).toContain('fields: the label would have 5 fields (5 in the file); the limit is 4');
    const choices = `title: Big\nfields:\n  - {name: S, type: selection, choices: [a, b, c, d, e, f]}\n`;
    const c = await apply('-f', file('choices.yaml', choices));
    expect(c.code).toBe(2);
    expect(c.stderr).toContain('fields[0].choices: 6 choices (6 in the file); the limit is 5');
    expect(writes()).toEqual([]);
  });

  it('counts disabled fields the label keeps against the limit', async () => {
    await apply('-f', file('a.yaml', 'title: K\nfields:\n  - {name: A, type: text}\n  - {name: B, type: text}\n'), '--publish');
    mock.requests.length = 0;
    const r = await apply('-f', file('b.yaml', 'title: K\nfields:\n  - {name: C, type: text}\n  - {name: D, type: text}\n  - {name: E, type: text}\n'));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('5 fields (3 in the file + 2 disabled ones it keeps)');
    expect(writes()).toEqual([]);
  });

  it('reads JSON from stdin, and refuses a published field type change with exit 2', async () => {
    const json = JSON.stringify({ title: 'J', fields: [{ name: 'N', type: 'integer' }] });
    const r = await runCli(['labels', 'apply', '-f', '-', '--publish'], { env, stdin: json });
    expect(r.code).toBe(0);
    mock.requests.length = 0;
    const bad = await runCli(['labels', 'apply', '-f', '-'], { env, stdin: JSON.stringify({ title: 'J', fields: [{ name: 'N', type: 'text' }] }) });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('published as integer; its type cannot change to text');
    expect(writes()).toEqual([]);
  });

  it('names the problem with a bad file, a missing file, an unknown id and an ambiguous title', async () => {
    let r = await apply('-f', file('bad.yaml', 'title: T\nfields:\n  - {name: X, type: colour}\n'));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('fields[0].type');
    r = await apply('-f', join(cfg.dir, 'missing.yaml'));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--file: ${join(cfg.dir, 'missing.yaml')} does not exist`);
    expect(r.stderr).not.toContain('ENOENT');
    r = await apply('-f', file('id.yaml', 'id: nosuchlabel\ntitle: T\n'));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('label nosuchlabel does not exist');
    await runCli(['labels', 'create', '--title', 'Twin'], { env });
    await runCli(['labels', 'create', '--title', 'Twin'], { env });
    r = await apply('-f', file('twin.yaml', 'title: Twin\n'));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('2 labels you edit are titled "Twin"');
    expect(r.stderr).toContain('add `id: <label id>`');
  });

  it('manages an ADMIN label with useAdminAccess and an admin scope', async () => {
    const admin = await mintToken(mock, { email: 'root@example.com', scopes: [LABEL_SCOPES.admin] });
    const adminEnv = { ...env, OPSCTL_ACCESS_TOKEN: admin };
    const f = file(
      'admin.yaml',
      'title: Legal hold\nlabelType: ADMIN\nfields:\n  - {name: Case, type: text}\npermissions:\n  - {email: counsel@example.com, role: READER}\n',
    );
    const first = await runCli(['labels', 'apply', '-f', f, '--publish'], { env: adminEnv });
    expect(first.code).toBe(0);
    expect(mock.requests.filter((r) => r.method !== 'GET').every((r) => r.status === 200)).toBe(true);
    expect(mock.requests.find((r) => r.method === 'POST' && r.path === '/v2/labels')?.query).toContain('useAdminAccess=true');
    mock.requests.length = 0;
    const again = await runCli(['labels', 'apply', '-f', f, '--publish'], { env: adminEnv });
    expect(again.stdout).toContain('nothing to send');
    expect(writes()).toEqual([]);
    // without an admin scope the same file is refused by the service (403 for a missing scope: exit 4, auth refused), with a hint
    const plain = await runCli(['labels', 'apply', '-f', f], { env });
    expect(plain.code).toBe(4);
    expect(plain.stderr).toContain('PERMISSION_DENIED');
  });

  it('changes an ADMIN label found by id with admin access, without labelType in the file', async () => {
    const admin = await mintToken(mock, { email: 'root@example.com', scopes: [LABEL_SCOPES.admin] });
    const adminEnv = { ...env, OPSCTL_ACCESS_TOKEN: admin };
    const created = await runCli(['labels', 'create', '--title', 'Hold', '--type', 'admin', '--json'], { env: adminEnv });
    const id = created.json().id as string;
    mock.requests.length = 0;
    const r = await runCli(['labels', 'apply', '-f', file('hold.yaml', `id: ${id}\ntitle: Hold\nfields:\n  - {name: Case, type: text}\n`), '--publish'], {
      env: adminEnv,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(writes()).toEqual(['POST /v2/labels/ID:delta', 'POST /v2/labels/ID:publish']);
    // the service refuses a non-admin write to an ADMIN label (403), so these passed with useAdminAccess
    expect(mock.requests.map((q) => q.status)).toEqual([200, 200, 200, 200]);
  });

  it('refuses --publish on a disabled label before sending anything', async () => {
    const f = file('d.yaml', 'title: Dormant\nfields:\n  - {name: A, type: text}\n');
    expect((await apply('-f', f, '--publish')).code).toBe(0);
    const id = (await runCli(['labels', 'list', '--json=id'], { env })).json()[0].id as string;
    expect((await runCli(['labels', 'disable', id], { env })).code).toBe(0);
    mock.requests.length = 0;
    const r = await apply('-f', file('d2.yaml', 'title: Dormant\nfields:\n  - {name: A, type: text}\n  - {name: B, type: text}\n'), '--publish');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is disabled: a disabled label cannot be published');
    expect(r.stderr).toContain(`opsctl labels enable ${id}`);
    expect(writes()).toEqual([]);
    // without --publish the change is sent as a draft of the disabled label
    expect((await apply('-f', file('d3.yaml', 'title: Dormant\nfields:\n  - {name: A, type: text}\n  - {name: B, type: text}\n'))).code).toBe(0);
    expect(writes()).toEqual(['POST /v2/labels/ID:delta']);
  });

  it('a concurrent change between plan and write is refused by requiredRevisionId, and nothing is half-applied', async () => {
    await apply('-f', file('a.yaml', 'title: Race\nfields:\n  - {name: A, type: text}\n'));
    // another writer changes the label after apply read it: a dispatcher that runs that change just before our :delta goes out
    class RacingAgent extends Agent {
      raced = false;
      override dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
        if (!this.raced && String(opts.path).includes(':delta')) {
          this.raced = true;
          const id = /labels\/(\w+):delta/.exec(String(opts.path))![1];
          const token = String(env.OPSCTL_ACCESS_TOKEN);
          void fetch(`${mock.url}/v2/labels/${id}:delta`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ requests: [{ updateLabel: { properties: { title: 'Race', description: 'someone else' }, updateMask: 'description' } }] }),
          }).then(() => super.dispatch(opts, handler));
          return true;
        }
        return super.dispatch(opts, handler);
      }
    }
    const agent = new RacingAgent();
    const r = await runCli(['labels', 'apply', '-f', file('b.yaml', 'title: Race\nfields:\n  - {name: B, type: text}\n'), '--yes'], { env, dispatcher: agent });
    await agent.close();
    expect(agent.raced).toBe(true);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('FAILED_PRECONDITION');
    expect(r.stderr).toContain('is not the latest revision');
    const label = (await runCli(['labels', 'list', '--json'], { env })).json()[0];
    expect(label.properties.description).toBe('someone else');
    expect(label.fields.map((f: any) => f.properties.displayName)).toEqual(['A']);
  });
});
