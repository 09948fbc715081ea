import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { trackerCall, useTrackerMock } from '../helpers/tracker.js';
import type { TestState } from '../helpers/mock.js';

const t = useTrackerMock((tracker) => {
  tracker.labels = [];
  tracker.webhooks = [];
});

describe('server refusals tell the user what to do next', () => {
  it('404 names the list command of the resource', async () => {
    const r = await t.cli('tracker', 'epics', 'get', '987654');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('HTTP 404');
    expect(r.stderr).toContain('opsctl tracker epics list');
  });

  it('404 of a resource without a list verb points at its help, not a missing command', async () => {
    const r = await t.cli('tracker', 'key-results', 'get', '00000000-0000-0000-0000-000000000000');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('opsctl tracker key-results --help');
    expect(r.stderr).not.toContain('key-results list');
  });

  it('422 (duplicate name) carries a hint; --json errors carry status and hint', async () => {
    expect((await t.cli('tracker', 'labels', 'create', '--name', 'dup')).code).toBe(0);
    const r = await t.cli('tracker', 'labels', 'create', '--name', 'dup', '--json');
    expect(r.code).toBe(1);
    const err = JSON.parse(r.stderr).error;
    expect(err).toMatchObject({ status: 422, code: 'http_422', service: 'tracker' });
    expect(err.message).toContain('already exists');
    expect(err.hint).toContain('opsctl tracker labels');
  });

  it('403 DisabledFeatureError says the feature is off', async () => {
    await t.mock.store.write((s: TestState) => void (s.tracker.features.documents = false));
    try {
      const r = await t.cli('tracker', 'documents', 'list');
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('HTTP 403');
      expect(r.stderr).toMatch(/feature is turned off/);
    } finally {
      await t.mock.store.write((s: TestState) => void (s.tracker.features.documents = true));
    }
  });

  it('401 exits 4 and says how to give a token', async () => {
    const r = await runCli(['tracker', 'labels', 'list'], { env: { ...t.env, OPSCTL_TRACKER_TOKEN: 'wrong' } });
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('OPSCTL_TRACKER_TOKEN');
    expect(r.stderr).not.toContain(t.mock.trackerToken);
  });
});

describe('webhooks create (204, no body)', () => {
  it('reports the new id from Location, and get works with it', async () => {
    const r = await t.cli('tracker', 'webhooks', 'create', '--webhook-url', 'https://ci.example/hook', '--secret', 'shh', '--json');
    expect(r.code).toBe(0);
    const created = r.json();
    const stored = await t.mock.store.read((s: TestState) => s.tracker.webhooks.at(-1).id);
    expect(created).toEqual({ id: stored, created: true });
    const got = await t.json('tracker', 'webhooks', 'get', String(created.id));
    expect(got).toMatchObject({ id: stored, webhook_url: 'https://ci.example/hook', has_secret: true });
    expect(JSON.stringify(got)).not.toContain('shh');

    const plain = await t.cli('tracker', 'webhooks', 'create', '--webhook-url', 'https://ci.example/two');
    expect(plain.code).toBe(0);
    expect(plain.stdout).toBe('');
    expect(plain.stderr).toMatch(/created webhook integration \d+ \(opsctl tracker webhooks get \d+\)/);
  });
});

describe('files upload that fails part-way', () => {
  it('exits 3, names what was uploaded and the exact files to upload again', async () => {
    // a server whose second upload request is refused (the mock cannot be told to fail the second one)
    let n = 0;
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        n++;
        res.setHeader('content-type', 'application/json');
        if (n === 1) {
          res.statusCode = 201;
          res.end(JSON.stringify([1, 2, 3, 4].map((id) => ({ id, name: `f${id - 1}.txt`, size: 1, content_type: 'text/plain' }))));
        } else {
          res.statusCode = 422;
          res.end(JSON.stringify({ message: 'storage is full', error: 'unprocessable' }));
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const paths = Array.from({ length: 6 }, (_, i) => t.file(`f${i}.txt`, 'x'));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const r = await runCli(['tracker', 'files', 'upload', ...paths, '--json'], { env: { ...t.env, OPSCTL_TRACKER_URL: url, OPSCTL_TRACKER_TOKEN: 'tok' } });
      expect(r.code).toBe(3);
      expect(n).toBe(2);
      const err = JSON.parse(r.stderr.trim().split('\n').at(-1)!).error;
      expect(err.message).toContain('uploaded 4 of 6 files; uploaded ids: 1, 2, 3, 4; then: tracker: HTTP 422: storage is full');
      expect(err.hint).toBe(`upload the rest again: ${paths.slice(4).join(' ')}`);
      expect(err.summary.uploaded).toHaveLength(4);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});

describe('iteration dates', () => {
  it('a day that does not exist is refused before sending, and by the mock with 400', async () => {
    for (const bad of ['2026-13-01', '2026-02-30', '2026-01-01junk']) {
      const r = await t.cli('tracker', 'iterations', 'create', '--name', 'x', '--start-date', bad, '--end-date', '2026-12-31');
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('--start-date: must be a date, e.g. 2026-01-31');
    }
    expect(t.mock.requests).toHaveLength(0);
    const direct = await trackerCall(t.mock)('POST', '/iterations', { name: 'x', start_date: '2026-13-01', end_date: '2026-12-31' });
    expect(direct.status).toBe(400);
    expect(direct.body.message).toContain('start_date');
    const ok = await t.json('tracker', 'iterations', 'create', '--name', 'leap', '--start-date', '2028-02-29', '--end-date', '2028-03-10');
    expect(ok).toMatchObject({ start_date: '2028-02-29', end_date: '2028-03-10' });
  });
});

describe('story custom fields', () => {
  it('applies a value of an enabled field; a disabled field, an unknown field or a foreign value is 422 and nothing is written', async () => {
    const fields = await t.mock.store.read((s: TestState) =>
      s.tracker.customFields.map((f: any) => ({ id: f.id, name: f.name, enabled: f.enabled, values: f.values.map((v: any) => v.id) })),
    );
    const on = fields.find((f: any) => f.enabled)!;
    const off = fields.find((f: any) => !f.enabled)!;
    const data = (items: unknown) => JSON.stringify({ name: 'with fields', custom_fields: items });

    const story = await t.json('tracker', 'stories', 'create', '--data', data([{ field_id: on.id, value_id: on.values[0] }]));
    expect(story.custom_fields).toEqual([{ field_id: on.id, value_id: on.values[0], value: expect.any(String) }]);
    const storiesBefore = await t.mock.store.read((s: TestState) => s.tracker.stories.length);

    const disabled = await t.cli('tracker', 'stories', 'create', '--data', data([{ field_id: off.id, value_id: off.values[0] }]));
    expect(disabled.code).toBe(1);
    expect(disabled.stderr).toContain(`HTTP 422: custom_fields: custom field "${off.name}" is disabled; only enabled fields can be applied to stories`);
    const foreign = await t.cli(
      'tracker',
      'stories',
      'update',
      String(story.id),
      '--data',
      JSON.stringify({ custom_fields: [{ field_id: on.id, value_id: off.values[0] }] }),
    );
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toContain(`is not a value of custom field "${on.name}"`);
    const unknown = await t.cli('tracker', 'stories', 'create', '--data', data([{ field_id: '00000000-0000-4000-8000-000000000000', value_id: on.values[0] }]));
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('does not exist');
    const malformed = await t.cli('tracker', 'stories', 'create', '--data', data([{ field_id: 'x' }]));
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain('--data custom_fields[0].field_id: must be a uuid');

    expect(await t.mock.store.read((s: TestState) => s.tracker.stories.length)).toBe(storiesBefore);
    expect((await t.json('tracker', 'stories', 'get', String(story.id))).custom_fields[0].value_id).toBe(on.values[0]);

    // enabling the field makes it applicable
    await t.json('tracker', 'custom-fields', 'update', off.id, '--enabled');
    const now = await t.json(
      'tracker',
      'stories',
      'update',
      String(story.id),
      '--data',
      JSON.stringify({ custom_fields: [{ field_id: off.id, value_id: off.values[0] }] }),
    );
    expect(now.custom_fields.map((c: any) => c.field_id)).toEqual([off.id]);
    await t.json('tracker', 'custom-fields', 'update', off.id, '--no-enabled');
  });
});
