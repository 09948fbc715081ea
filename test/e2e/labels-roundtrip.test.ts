import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { startMock } from '../helpers/mock.js';
import { mintToken } from '../helpers/labels.js';

/**
 * Scripting the label service as people script gh, through the built binary against two mocks (two
 * "workspaces"): export prints the apply-file format, apply takes it (and the service's own get/list
 * --json output) back, a copy into the second mock exports identically, renames keep ids, and apply
 * covers the whole label (copy mode, apps, disabled state).
 */
type Mock = Awaited<ReturnType<typeof startMock>>;
let a: Mock;
let b: Mock;
let cfg: ReturnType<typeof tempConfigDir>;
let envA: NodeJS.ProcessEnv;
let envB: NodeJS.ProcessEnv;

beforeAll(async () => {
  cfg = tempConfigDir('opsctl-labels-rt-');
  [a, b] = await Promise.all([startMock({ services: ['labels'] }), startMock({ services: ['labels'] })]);
  const base = { OPSCTL_CONFIG_DIR: cfg.dir, CI: '1' };
  envA = { ...base, OPSCTL_LABELS_URL: a.url, OPSCTL_ACCESS_TOKEN: await mintToken(a) };
  envB = { ...base, OPSCTL_LABELS_URL: b.url, OPSCTL_ACCESS_TOKEN: await mintToken(b) };
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  cfg?.cleanup();
});

const opsctl = async (env: NodeJS.ProcessEnv, args: string[], input?: string) => {
  const r = await runBin(args, { env, ...(input !== undefined ? { input } : {}) });
  return { code: r.exitCode, out: String(r.stdout), err: String(r.stderr) };
};
const file = (name: string, text: string) => {
  const path = join(cfg.dir, name);
  writeFileSync(path, text);
  return path;
};
const writesTo = (m: Mock) => m.requests.filter((r) => r.method !== 'GET').length;

const SENSITIVITY = `
title: Sensitivity
description: How secret a document is
copyMode: ALWAYS_COPY
enabledApps: [DRIVE]
fields:
  - name: Level
    type: selection
    required: true
    choices: [Low, {name: High, description: Need-to-know}]
  - {name: Review date, type: date, dateFormat: SHORT_DATE}
  - {name: Reviewers, type: user, list: 3}
  - {name: Ticket, type: text}
permissions:
  - {email: bob@example.com, role: READER}
  - {audience: audiences/default, role: APPLIER}
`;
const RETIRED = `
title: Retired
disabled: {hideInSearch: true, showInApply: false}
fields:
  - {name: Reason, type: integer}
`;

describe('labels export | apply', () => {
  let exported: string;

  it('export prints the apply-file format; against the same service it plans 0 changes', async () => {
    expect((await opsctl(envA, ['labels', 'apply', '-f', file('s.yaml', SENSITIVITY), '--publish'])).code).toBe(0);
    const retired = await opsctl(envA, ['labels', 'apply', '-f', file('r.yaml', RETIRED), '--publish']);
    expect(retired.code, retired.err).toBe(0);
    expect(retired.out).toMatch(/~ label: disable \(hidden in search\)/);

    const one = await opsctl(envA, ['labels', 'export', (await labelIds(envA))[0]]);
    expect(one.code, one.err).toBe(0);
    expect(parse(one.out)).toEqual({
      title: 'Sensitivity',
      description: 'How secret a document is',
      labelType: 'SHARED',
      copyMode: 'ALWAYS_COPY',
      enabledApps: ['DRIVE'],
      disabled: false,
      fields: [
        { name: 'Level', type: 'selection', required: true, choices: ['Low', { name: 'High', description: 'Need-to-know' }] },
        { name: 'Review date', type: 'date', dateFormat: 'SHORT_DATE' },
        { name: 'Reviewers', type: 'user', list: 3 },
        { name: 'Ticket', type: 'text' },
      ],
      permissions: [
        { email: 'bob@example.com', role: 'READER' },
        { audience: 'audiences/default', role: 'APPLIER' },
      ],
    });

    const all = await opsctl(envA, ['labels', 'export', '--all']);
    expect(all.code, all.err).toBe(0);
    exported = all.out;
    const docs = parse(exported) as Array<Record<string, unknown>>;
    expect(docs.map((d) => d.title)).toEqual(['Sensitivity', 'Retired']);
    expect(docs[1]!.disabled).toEqual({ hideInSearch: true, showInApply: false });
    const json = await opsctl(envA, ['labels', 'export', '--all', '--json']);
    expect(JSON.parse(json.out)).toEqual(docs);

    a.requests.length = 0;
    const plan = await opsctl(envA, ['labels', 'apply', '-f', '-', '--dry-run', '--json'], exported);
    expect(plan.code, plan.err).toBe(0);
    expect(JSON.parse(plan.out)).toMatchObject({ writes: 0, applied: false });
    const human = await opsctl(envA, ['labels', 'apply', '-f', '-'], exported);
    expect(human.out.match(/up to date: nothing to send/g)).toHaveLength(2);
    expect(writesTo(a)).toBe(0);
  });

  it('against another service it plans the copy; applied, the copy exports to an identical file', async () => {
    const path = file('exported.yaml', exported);
    // "Retired" is disabled: a new label is disabled only after its first publish
    expect((await opsctl(envB, ['labels', 'apply', '-f', path, '--dry-run'])).err).toMatch(
      /\[1\]\.disabled: only a published label can be disabled; this one is new: add --publish/,
    );
    const plan = await opsctl(envB, ['labels', 'apply', '-f', path, '--dry-run', '--publish']);
    expect(plan.code, plan.err).toBe(0);
    expect(plan.out).toMatch(/label "Sensitivity" \(new\)/);
    expect(plan.out).toMatch(/label "Retired" \(new\)/);
    expect(plan.out).toMatch(/~ copy mode: DO_NOT_COPY → ALWAYS_COPY/);
    expect(writesTo(b)).toBe(0);

    const copy = await opsctl(envB, ['labels', 'apply', '-f', path, '--publish']);
    expect(copy.code, copy.err).toBe(0);
    expect(copy.err).toMatch(/2 labels changed, 0 labels up to date/);
    const again = await opsctl(envB, ['labels', 'export', '--all']);
    expect(again.out).toBe(exported);
    b.requests.length = 0;
    expect(JSON.parse((await opsctl(envB, ['labels', 'apply', '-f', path, '--publish', '--json'])).out)).toMatchObject({ writes: 0 });
    expect(writesTo(b)).toBe(0);
  });

  it('apply takes `labels get --json` and `labels list --json` output as it is, naming what it ignores once', async () => {
    const [id] = await labelIds(envA);
    const got = await opsctl(envA, ['labels', 'get', id, '--json']);
    const plan = await opsctl(envA, ['labels', 'apply', '-f', '-', '--dry-run'], got.out);
    expect(plan.code, plan.err).toBe(0);
    expect(plan.out).toMatch(/up to date: nothing to send/);
    const notes = plan.err.split('\n').filter((l) => l.includes('ignored what the service owns'));
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(/name, .*revisionId.*fields\[\]\.queryKey/);

    const listed = await opsctl(envA, ['labels', 'list', '--json']);
    const fromList = await opsctl(envA, ['labels', 'apply', '-f', '-', '--dry-run', '--json'], listed.out);
    expect(fromList.code, fromList.err).toBe(0);
    expect(JSON.parse(fromList.out)).toMatchObject({ writes: 0 });

    // the same output applied to the other service: the ids there are unknown, so titles match
    const other = await opsctl(envB, ['labels', 'apply', '-f', '-', '--dry-run', '--publish', '--json'], listed.out);
    expect(other.code, other.err).toBe(0);
    expect(JSON.parse(other.out)).toMatchObject({ writes: 0 });
  });
});

describe('labels apply: renames and the whole label', () => {
  it('renamed_from renames a field and a choice in place (same ids), shown as renames, not create + delete', async () => {
    const [id] = await labelIds(envA);
    const before = JSON.parse((await opsctl(envA, ['labels', 'get', id, '--json'])).out);
    const renamed = (await opsctl(envA, ['labels', 'export', id])).out
      .replace('- name: Level\n', '- name: Severity\n    renamed_from: Level\n')
      .replace('- Low\n', '- name: Minor\n        renamed_from: [Small, Low]\n');
    const path = file('renamed.yaml', renamed);
    const plan = await opsctl(envA, ['labels', 'apply', '-f', path, '--dry-run']);
    expect(plan.code, plan.err).toBe(0);
    expect(plan.out).toMatch(/~ field "Severity": renamed from "Level"/);
    expect(plan.out).toMatch(/~ choice "Minor" of "Severity": renamed from "Low"/);
    expect(plan.out).not.toMatch(/^\s*[+-] /m);
    expect(plan.out).toMatch(/1 write: 1 :delta with 2 updates/);

    const done = await opsctl(envA, ['labels', 'apply', '-f', path, '--publish']);
    expect(done.code, done.err).toBe(0);
    const after = JSON.parse((await opsctl(envA, ['labels', 'get', id, '--json'])).out);
    expect(after.fields[0]).toMatchObject({ id: before.fields[0].id, properties: { displayName: 'Severity' } });
    expect(after.fields[0].selectionOptions.choices[0]).toMatchObject({
      id: before.fields[0].selectionOptions.choices[0].id,
      properties: { displayName: 'Minor' },
    });
    // run again: the old names are gone and the new ones match: nothing to do
    expect((await opsctl(envA, ['labels', 'apply', '-f', path])).out).toMatch(/up to date/);
  });

  it('copy mode, enabled apps and the disabled state are planned and sent, each once', async () => {
    const [id] = await labelIds(envA);
    const text = (await opsctl(envA, ['labels', 'export', id])).out
      .replace('copyMode: ALWAYS_COPY', 'copyMode: COPY_APPLIABLE')
      .replace('enabledApps:\n  - DRIVE', 'enabledApps:\n  - DRIVE\n  - GMAIL')
      .replace('disabled: false', 'disabled: true');
    a.requests.length = 0;
    const r = await opsctl(envA, ['labels', 'apply', '-f', file('whole.yaml', text)]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/~ copy mode: ALWAYS_COPY → COPY_APPLIABLE/);
    expect(r.out).toMatch(/~ enabled apps: DRIVE → DRIVE, GMAIL/);
    expect(r.out).toMatch(/~ label: disable \(default policy\)/);
    expect(a.requests.filter((q) => q.method === 'POST').map((q) => q.path.replace(/labels\/\w+/, 'labels/ID'))).toEqual([
      '/v2/labels/ID:updateLabelCopyMode',
      '/v2/labels/ID:updateLabelEnabledAppSettings',
      '/v2/labels/ID:disable',
    ]);
    const exported = parse((await opsctl(envA, ['labels', 'export', id])).out);
    expect(exported).toMatchObject({ copyMode: 'COPY_APPLIABLE', enabledApps: ['DRIVE', 'GMAIL'], disabled: true });
    // and back: enable
    const back = await opsctl(envA, ['labels', 'apply', '-f', file('enable.yaml', text.replace('disabled: true', 'disabled: false'))]);
    expect(back.out).toMatch(/~ label: enable/);
    expect(JSON.parse((await opsctl(envA, ['labels', 'get', id, '--json'])).out).lifecycle.state).toBe('PUBLISHED');
  });

  it('refuses bad files before sending anything: wrong types, a rename that is ambiguous, disabling a new label without --publish', async () => {
    a.requests.length = 0;
    const bad = await opsctl(envA, [
      'labels',
      'apply',
      '-f',
      file(
        'bad.yaml',
        'title: 5\ncopyMode: sometimes\nenabledApps: DRIVE\ndisabled: yes please\nfields:\n  - {name: A, type: text, renamed_from: B}\n  - {name: C, type: text, renamed_from: B}\n',
      ),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/title: expected text, got number/);
    expect(bad.err).toMatch(/copyMode: "sometimes" is not one of DO_NOT_COPY, ALWAYS_COPY, COPY_APPLIABLE/);
    expect(bad.err).toMatch(/enabledApps: expected a list, got string/);
    expect(bad.err).toMatch(/disabled: expected true, false or \{hideInSearch, showInApply\}, got string/);
    const ambiguous = await opsctl(envA, [
      'labels',
      'apply',
      '-f',
      file('amb.yaml', 'title: T\nfields:\n  - {name: A, type: text, renamed_from: B}\n  - {name: C, type: text, renamed_from: B}\n'),
    ]);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.err).toMatch(/fields\[1\]\.renamed_from: "B" is also claimed by fields\[0\]/);
    const newDisabled = await opsctl(envA, ['labels', 'apply', '-f', file('nd.yaml', 'title: Brand new\ndisabled: true\n')]);
    expect(newDisabled.code).toBe(2);
    expect(newDisabled.err).toMatch(/only a published label can be disabled; this one is new: add --publish/);
    expect(writesTo(a)).toBe(0);
  });
});

/** The ids `labels list` prints; every caller has applied a label first, so there is one at least. */
async function labelIds(env: NodeJS.ProcessEnv): Promise<[string, ...string[]]> {
  const r = await opsctl(env, ['labels', 'list', '--json']);
  const [first, ...rest] = (JSON.parse(r.out) as Array<{ id: string }>).map((l) => l.id);
  if (first === undefined) throw new Error(`labels list printed no label: ${r.out}`);
  return [first, ...rest];
}
