import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createMockServer } from '@opsctl/mock/server.js';
import { runCli, tempConfigDir } from '../helpers/cli.js';
import { startMock, trackerEnv, type TestState } from '../helpers/mock.js';

let cfg: ReturnType<typeof tempConfigDir>;
beforeEach(() => {
  cfg = tempConfigDir();
});
afterEach(() => cfg.cleanup());

describe('test knobs', () => {
  it('are off unless the server is started for tests', async () => {
    const server = await createMockServer({ services: ['tracker'] });
    try {
      await server.service('tracker');
      const token = await server.store.read((s: TestState) => s.tracker.token as string);
      const forced = await request(`${server.url}/api/v3/labels`, { headers: { 'tracker-token': token, 'x-mock-status': '503' } });
      expect(forced.statusCode).toBe(200);
      await forced.body.dump();
      const log = await request(`${server.url}/__mock/requests`);
      expect(log.statusCode).toBe(404);
      await log.body.dump();
      expect(() => server.inject({ status: 500 })).toThrow('test: true');
      expect(server.requests).toHaveLength(0);
    } finally {
      await server.close();
    }
  });

  it('force a status, inject faults and log requests in test mode', async () => {
    const mock = await startMock({ services: ['tracker'] });
    try {
      const forced = await request(`${mock.url}/api/v3/labels`, { headers: { 'tracker-token': mock.trackerToken, 'x-mock-status': '503' } });
      expect(forced.statusCode).toBe(503);
      expect(await forced.body.json()).toMatchObject({ error: 'forced' });
      const add = await request(`${mock.url}/__mock/faults`, { method: 'POST', body: JSON.stringify({ status: 502, path: '/api/v3/labels', times: 1 }) });
      expect(add.statusCode).toBe(204);
      await add.body.dump();
      const faulted = await request(`${mock.url}/api/v3/labels`, { headers: { 'tracker-token': mock.trackerToken } });
      expect(faulted.statusCode).toBe(502);
      await faulted.body.dump();
      const log = await request(`${mock.url}/__mock/requests`);
      expect((await log.body.json()) as unknown[]).toEqual([
        expect.objectContaining({ service: 'tracker', method: 'GET', path: '/api/v3/labels', status: 503 }),
        expect.objectContaining({ status: 502 }),
      ]);
    } finally {
      await mock.close();
    }
  });
});

describe('the CLI over a flaky server', () => {
  it('retries a read through injected 503s and succeeds, without a 500 reaching the user', async () => {
    const mock = await startMock({ services: ['tracker'] });
    try {
      mock.inject({ status: 503, path: '/api/v3/labels', method: 'GET', times: 2 });
      const r = await runCli(['tracker', 'labels', 'list', '--json'], { env: trackerEnv(mock, cfg.dir) });
      expect(r.code).toBe(0);
      expect(mock.requests.map((q) => q.status)).toEqual([503, 503, 200]);
    } finally {
      await mock.close();
    }
  });

  it('retries a create after a 429 with Retry-After, so the label is created once', async () => {
    const mock = await startMock({ services: ['tracker'] });
    try {
      mock.inject({ status: 429, path: '/api/v3/labels', method: 'POST', times: 1, retryAfter: 0 });
      const r = await runCli(['tracker', 'labels', 'create', '--name', 'once', '--json=name'], { env: trackerEnv(mock, cfg.dir) });
      expect(r.code).toBe(0);
      expect(mock.requests.map((q) => q.status)).toEqual([429, 201]);
      expect(await mock.store.read((s: TestState) => s.tracker.labels.length)).toBe(1);
    } finally {
      await mock.close();
    }
  });

  it('does not retry a create on 503 and reports the server error', async () => {
    const mock = await startMock({ services: ['tracker'] });
    try {
      mock.inject({ status: 503, path: '/api/v3/labels', method: 'POST', times: 5 });
      const r = await runCli(['tracker', 'labels', 'create', '--name', 'x'], { env: trackerEnv(mock, cfg.dir) });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('HTTP 503');
      expect(mock.requests).toHaveLength(1);
    } finally {
      await mock.close();
    }
  });

  it('logs requests with --debug and never the token', async () => {
    const mock = await startMock({ services: ['tracker'] });
    try {
      const r = await runCli(['tracker', 'labels', 'list', '--debug'], { env: trackerEnv(mock, cfg.dir) });
      expect(r.code).toBe(0);
      expect(r.stderr).toContain('> GET');
      expect(r.stderr).toContain('"Tracker-Token":"[redacted]"');
      expect(r.stderr).not.toContain(mock.trackerToken);
    } finally {
      await mock.close();
    }
  });
});
