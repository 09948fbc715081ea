import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';

/**
 * `opsctl api --paginate` through the built binary against a small hostile server: cursor styles
 * (next_cursor, response_metadata.next_cursor) followed to the end, and the loop guards — a service
 * naming the same next page twice, or paging without end past --max-pages — stop with a clear error.
 */
describe('api --paginate: cursors and the loop guards', () => {
  let server: Server;
  let url = '';
  const requests: string[] = [];
  const cfg = tempConfigDir('opsctl-api-guard-');
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    server = createServer((req, res) => {
      requests.push(req.url ?? '');
      const u = new URL(req.url ?? '/', 'http://x');
      const json = (body: unknown) => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(body));
      };
      if (u.pathname === '/cursor') {
        const at = Number(u.searchParams.get('cursor') ?? '0');
        return json({ data: [at, at + 1], next_cursor: at < 4 ? String(at + 2) : '' });
      }
      if (u.pathname === '/slack') {
        const at = Number(u.searchParams.get('cursor') ?? '0');
        return json({ ok: true, members: [`m${at}`], response_metadata: { next_cursor: at < 2 ? String(at + 1) : '' } });
      }
      if (u.pathname === '/same-token') return json({ items: [u.searchParams.get('pageToken') ?? 'first'], nextPageToken: 'again' });
      if (u.pathname === '/endless') {
        const n = Number(u.searchParams.get('pageToken') ?? '0');
        return json({ items: [n], nextPageToken: String(n + 1) });
      }
      res.statusCode = 404;
      json({ error: 'not found' });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    env = { OPSCTL_CONFIG_DIR: cfg.dir, OPSCTL_API_URL: url, OPSCTL_ACCESS_TOKEN: 'tok-guard' };
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    cfg.cleanup();
  });

  it('follows next_cursor (sent back as cursor) over 3 pages: --slurp the pages, --slurp-items the items', async () => {
    const pages = await runBin(['api', '/cursor', '--paginate', '--slurp'], { env });
    expect(pages.exitCode, String(pages.stderr)).toBe(0);
    const parsed = JSON.parse(String(pages.stdout)) as { data: number[] }[];
    expect(parsed.map((p) => p.data)).toEqual([
      [0, 1],
      [2, 3],
      [4, 5],
    ]);
    const items = await runBin(['api', '/cursor', '--paginate', '--slurp-items'], { env });
    expect(JSON.parse(String(items.stdout))).toEqual([0, 1, 2, 3, 4, 5]);
  }, 120_000);

  it("follows Slack's response_metadata.next_cursor to the empty one", async () => {
    const r = await runBin(['api', '/slack', '--paginate', '--slurp-items'], { env });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(JSON.parse(String(r.stdout))).toEqual(['m0', 'm1', 'm2']);
  }, 120_000);

  it('a service naming the same nextPageToken twice is stopped at once with a clear error (exit 1), not followed forever', async () => {
    requests.length = 0;
    const r = await runBin(['api', '/same-token', '--paginate', '--slurp'], { env });
    expect(r.exitCode).toBe(1);
    expect(String(r.stderr)).toContain('page 2 names as its next page one already fetched (/same-token?pageToken=again)');
    expect(String(r.stderr)).toContain('paging in a loop');
    expect(requests).toEqual(['/same-token', '/same-token?pageToken=again']);
  }, 120_000);

  it('a service paging without end stops at --max-pages with an error naming the flag', async () => {
    requests.length = 0;
    const r = await runBin(['api', '/endless', '--paginate', '--max-pages', '5'], { env });
    expect(r.exitCode).toBe(1);
    expect(String(r.stderr)).toContain('stopped after 5 pages (--max-pages 5)');
    expect(requests).toHaveLength(5);
    // each page printed as it came, before the stop
    expect(String(r.stdout).match(/"items"/g)).toHaveLength(5);
  }, 120_000);

  it('--max-pages takes a whole number of pages', async () => {
    const r = await runBin(['api', '/endless', '--paginate', '--max-pages', '0'], { env });
    expect(r.exitCode).toBe(2);
    expect(String(r.stderr)).toContain('--max-pages');
    expect(String(r.stderr)).toContain('a whole number of pages');
    const alone = await runBin(['api', '/endless', '--max-pages', '5'], { env });
    expect(alone.exitCode).toBe(2);
    expect(String(alone.stderr)).toContain('--max-pages needs --paginate');
  }, 120_000);
});
