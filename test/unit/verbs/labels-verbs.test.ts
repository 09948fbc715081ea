import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { run as disable } from '../../../src/commands/labels/disable.js';
import { run as permissionsAdd } from '../../../src/commands/labels/permissions-add.js';
import { run as publish } from '../../../src/commands/labels/publish.js';
import { verbHarness, type VerbHarness } from '../../helpers/httpmock.js';

const ORIGIN = 'https://labels.test';
const LABEL = { id: 'abc', name: 'labels/abc', revisionId: '4', properties: { title: 'Sensitivity' }, lifecycle: { state: 'PUBLISHED' } };

let dir: string;
let h: VerbHarness;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'opsctl-unit-'));
  h = verbHarness({ OPSCTL_CONFIG_DIR: dir, OPSCTL_LABELS_URL: ORIGIN, OPSCTL_ACCESS_TOKEN: 'unit-token' });
});
afterEach(async () => {
  await h.verify();
  rmSync(dir, { recursive: true, force: true });
});

/** The label read every lifecycle verb starts with (its revision guards the write). */
function readLabel(): void {
  h.agent
    .get(ORIGIN)
    .intercept({ path: (p) => p.startsWith('/v2/labels/abc?') || p === '/v2/labels/abc', method: 'GET' })
    .reply(200, LABEL);
}

describe('labels publish / disable (their runs with a fake HTTP client)', () => {
  it('publish POSTs :publish guarded by the revision just read, with the bearer token', async () => {
    readLabel();
    let body: unknown;
    let auth: unknown;
    h.agent
      .get(ORIGIN)
      .intercept({ path: (p) => p.startsWith('/v2/labels/abc:publish'), method: 'POST' })
      .reply(200, (req) => {
        body = JSON.parse(req.body as string);
        auth = (req.headers as Record<string, string>).authorization ?? (req.headers as Record<string, string>).Authorization;
        return { ...LABEL, revisionId: '5' };
      });
    const result = await publish({ label: 'labels/abc', admin: false }, h.ctx);
    expect(body).toMatchObject({ writeControl: { requiredRevisionId: '4' } });
    expect(auth).toBe('Bearer unit-token');
    expect(result.message).toMatch(/^published /);
  });

  it('disable sends the disabled policy of its flags', async () => {
    readLabel();
    let body: unknown;
    h.agent
      .get(ORIGIN)
      .intercept({ path: (p) => p.startsWith('/v2/labels/abc:disable'), method: 'POST' })
      .reply(200, (req) => {
        body = JSON.parse(req.body as string);
        return { ...LABEL, lifecycle: { state: 'DISABLED' } };
      });
    const result = await disable({ label: 'labels/abc', admin: false, hideInSearch: true, showInApply: false }, h.ctx);
    expect(body).toMatchObject({ writeControl: { requiredRevisionId: '4' }, disabledPolicy: { hideInSearch: true, showInApply: false } });
    expect(result.message).toMatch(/^disabled /);
  });

  it('a write to a revision is refused before any request, naming the fix', async () => {
    const err = (await publish({ label: 'labels/abc@3', admin: false }, h.ctx).catch((e: unknown) => e)) as Error & { exitCode?: number; hint?: string };
    expect(err.message).toContain('revision @3');
    expect(err.exitCode).toBe(2);
  });
});

describe('labels permissions add (run with a fake HTTP client)', () => {
  it('sends every grant in one :batchUpdate on the label', async () => {
    let body: { requests?: Array<{ parent: string; labelPermission: Record<string, string> }> } = {};
    h.agent
      .get(ORIGIN)
      .intercept({ path: (p) => p.startsWith('/v2/labels/abc/permissions:batchUpdate'), method: 'POST' })
      .reply(200, (req) => {
        body = JSON.parse(req.body as string) as typeof body;
        return { permissions: body.requests?.map((r) => ({ ...r.labelPermission, name: `labels/abc/permissions/${r.labelPermission.email ?? 'x'}` })) };
      });
    const result = await permissionsAdd(
      { label: 'labels/abc', grants: ['bob@example.com=READER', 'carol@example.com=EDITOR'], revision: undefined, admin: false },
      h.ctx,
    );
    expect(body.requests?.map((r) => [r.parent, r.labelPermission.email, r.labelPermission.role])).toEqual([
      ['labels/abc', 'bob@example.com', 'READER'],
      ['labels/abc', 'carol@example.com', 'EDITOR'],
    ]);
    expect((result.data as unknown[]).length).toBe(2);
  });

  it('a principal given twice is refused before any request', async () => {
    const err = (await permissionsAdd(
      { label: 'labels/abc', grants: ['bob@example.com=READER', 'bob@example.com=EDITOR'], revision: undefined, admin: false },
      h.ctx,
    ).catch((e: unknown) => e)) as Error;
    expect(err.message).toContain('given twice');
  });
});
