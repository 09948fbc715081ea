import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { tempConfigDir } from '../helpers/cli.js';
import { startMock } from '../helpers/mock.js';
import { labelsApi, mintToken } from '../helpers/labels.js';
import { PtySession, ptyAvailable } from '../helpers/pty.js';

/**
 * `opsctl api` as gh api (issue 26, item 4), through the built binary: --paginate over the three ways
 * services say "next page" (the tracker's `next`, the label service's `nextPageToken`, a Link header),
 * --slurp, typed -F fields with @file and @-, -H, -i, --silent, --jq and --input -.
 */
describe('the tracker on the embedded mock: a 1,000-record list', () => {
  const cfg = tempConfigDir('opsctl-api-embedded-');
  const env = { OPSCTL_CONFIG_DIR: cfg.dir };
  afterAll(() => cfg.cleanup());

  beforeAll(async () => {
    // 10 bulk creates of 100, each body from stdin (--input -)
    for (let b = 0; b < 10; b++) {
      const body = JSON.stringify({ stories: Array.from({ length: 100 }, (_, i) => ({ name: `paged record ${b * 100 + i}` })) });
      const r = await runBin(['api', '/api/v3/stories/bulk', '--service', 'tracker', '-X', 'POST', '--input', '-', '--silent'], { env, input: body });
      expect(r.exitCode, String(r.stderr)).toBe(0);
      expect(String(r.stdout), '--silent prints no body').toBe('');
    }
  }, 300_000);

  it('--paginate --slurp returns the pages as gh does (40 of 25: scripts read .[].data[]); --slurp-items one array of 1,000 distinct stories', async () => {
    const pages = await runBin(['api', '/api/v3/search/stories', '--service', 'tracker', '-f', 'query=paged record', '--paginate', '--slurp'], { env });
    expect(pages.exitCode, String(pages.stderr)).toBe(0);
    const asGh = JSON.parse(String(pages.stdout)) as Array<{ data: unknown[] }>;
    expect(asGh).toHaveLength(40);
    expect(asGh.flatMap((p) => p.data)).toHaveLength(1000);
    const r = await runBin(['api', '/api/v3/search/stories', '--service', 'tracker', '-f', 'query=paged record', '--paginate', '--slurp-items'], { env });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const all = JSON.parse(String(r.stdout)) as Array<{ id: number; name: string }>;
    expect(all).toHaveLength(1000);
    expect(new Set(all.map((s) => s.id)).size).toBe(1000);
    expect(new Set(all.map((s) => s.name))).toEqual(new Set(Array.from({ length: 1000 }, (_, i) => `paged record ${i}`)));
  }, 300_000);

  it('--paginate without --slurp prints page by page; --jq filters each page; -F page_size is a number', async () => {
    const r = await runBin(
      ['api', '/api/v3/search/stories', '--service', 'tracker', '-f', 'query=paged', '-F', 'page_size=250', '--paginate', '--jq', '.data | length'],
      {
        env,
      },
    );
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(String(r.stdout).trim().split('\n')).toEqual(['250', '250', '250', '250']);
    const slurped = await runBin(
      ['api', '/api/v3/search/stories', '--service', 'tracker', '-f', 'query=paged', '-F', 'page_size=250', '--paginate', '--slurp-items', '--jq', 'length'],
      {
        env,
      },
    );
    expect(String(slurped.stdout).trim()).toBe('1000');
    const gh = await runBin(
      [
        'api',
        '/api/v3/search/stories',
        '--service',
        'tracker',
        '-f',
        'query=paged',
        '-F',
        'page_size=250',
        '--paginate',
        '--slurp',
        '--jq',
        '[length, ([.[].data[]] | length)] | @tsv',
      ],
      { env },
    );
    expect(String(gh.stdout).trim()).toBe('4\t1000');
  }, 300_000);

  it('follows page numbers (the epics paginated list: next is a page number, null on the last)', async () => {
    for (let i = 0; i < 12; i++) {
      const r = await runBin(['api', '/api/v3/epics', '--service', 'tracker', '-X', 'POST', '-f', `name=paged epic ${i}`, '--silent'], { env });
      expect(r.exitCode, String(r.stderr)).toBe(0);
    }
    const r = await runBin(
      [
        'api',
        '/api/v3/epics/paginated',
        '--service',
        'tracker',
        '-F',
        'page_size=5',
        '--paginate',
        '--slurp',
        '--jq',
        '[length, ([.[].data[]] | length), .[0].total] | @tsv',
      ],
      { env },
    );
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const [pages, items, total] = String(r.stdout).trim().split('\t').map(Number);
    expect(total).toBeGreaterThanOrEqual(12);
    expect(items).toBe(total);
    expect(pages).toBe(Math.ceil(total! / 5));
  }, 300_000);

  it('-F types values and reads @file and @-; -f keeps text; the story shows them', async () => {
    writeFileSync(join(cfg.dir, 'notes.md'), 'from a file\n');
    const r = await runBin(
      [
        'api',
        '/api/v3/stories',
        '--service',
        'tracker',
        '-X',
        'POST',
        '-f',
        'name=typed',
        '-F',
        'estimate=3',
        '-F',
        'archived=false',
        '-F',
        `description=@${join(cfg.dir, 'notes.md')}`,
        '-F',
        'external_links[]=https://example.com/a',
        '-F',
        'external_links[]=@-',
        '--jq',
        '[.estimate, .archived, .description, .external_links] | tojson',
      ],
      { env, input: 'https://example.com/b' },
    );
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(JSON.parse(String(r.stdout))).toEqual([3, false, 'from a file\n', ['https://example.com/a', 'https://example.com/b']]);
    // -f keeps "3" a string: the tracker refuses it as an estimate, naming the field
    const raw = await runBin(['api', '/api/v3/stories', '--service', 'tracker', '-X', 'POST', '-f', 'name=raw', '-f', 'estimate=3'], { env });
    expect(raw.exitCode).toBe(1);
    expect(String(raw.stderr)).toContain('estimate');
  }, 120_000);

  it('plain-language errors for a missing @file and a bad field, before anything is sent', async () => {
    const missing = await runBin(['api', '/api/v3/stories', '--service', 'tracker', '-X', 'POST', '-F', 'description=@no-such.md'], { env });
    expect(missing.exitCode).toBe(2);
    expect(String(missing.stderr)).toContain('-F: no-such.md does not exist');
    expect(String(missing.stderr)).not.toContain('ENOENT');
    const clash = await runBin(['api', '/api/v3/stories', '--service', 'tracker', '-X', 'POST', '-F', 'a=1', '-F', 'a[b]=2'], { env });
    expect(clash.exitCode).toBe(2);
    expect(String(clash.stderr)).toContain('a is already a value');
    const slurp = await runBin(['api', '/api/v3/labels', '--service', 'tracker', '--slurp'], { env });
    expect(slurp.exitCode).toBe(2);
    expect(String(slurp.stderr)).toContain('--slurp needs --paginate');
    const both = await runBin(['api', '/api/v3/labels', '--service', 'tracker', '--paginate', '--slurp', '--slurp-items'], { env });
    expect(both.exitCode).toBe(2);
    expect(String(both.stderr)).toContain('--slurp and --slurp-items: give one');
  }, 120_000);

  it('-i prints the status line and headers before the body, on errors too; --debug never shows the tracker token', async () => {
    const ok = await runBin(['api', '/api/v3/labels', '--service', 'tracker', '-i', '--debug'], { env });
    expect(ok.exitCode).toBe(0);
    expect(String(ok.stdout)).toMatch(/^HTTP\/1\.1 200 OK\nContent-Type: application\/json[^\n]*\n(?:[A-Z][\w-]*: [^\n]*\n)*\n\[/);
    expect(String(ok.stderr)).toContain('[redacted]');
    const token = String(ok.stderr).match(/tracker-token[^,}]*/i)?.[0] ?? '';
    expect(token).toContain('[redacted]');
    const missing = await runBin(['api', '/api/v3/stories/99999999', '--service', 'tracker', '-i'], { env });
    expect(missing.exitCode).toBe(1);
    expect(String(missing.stdout)).toMatch(/^HTTP\/1\.1 404 Not Found\n/);
  }, 120_000);
});

describe('the label service: nextPageToken', () => {
  let mock: Awaited<ReturnType<typeof startMock>>;
  const cfg = tempConfigDir('opsctl-api-labels-');
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    mock = await startMock({ services: ['labels'] });
    await mock.service('labels');
    const token = await mintToken(mock);
    const api = labelsApi(mock, token);
    for (let i = 0; i < 45; i++) expect((await api('POST', '/v2beta/labels', { labelType: 'SHARED', properties: { title: `paged ${i}` } })).status).toBe(200);
    env = { OPSCTL_CONFIG_DIR: cfg.dir, OPSCTL_LABELS_URL: mock.url, OPSCTL_ACCESS_TOKEN: token };
  }, 120_000);
  afterAll(async () => {
    await mock.close();
    cfg.cleanup();
  });

  it('follows nextPageToken with the same parameters: 45 labels in pages of 10, one array', async () => {
    mock.requests.length = 0;
    const r = await runBin(['api', '/v2beta/labels', '--service', 'labels', '-F', 'pageSize=10', '-f', 'view=LABEL_VIEW_FULL', '--paginate', '--slurp-items'], {
      env,
    });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const all = JSON.parse(String(r.stdout)) as Array<{ properties: { title: string } }>;
    expect(all.map((l) => l.properties.title).sort()).toEqual(Array.from({ length: 45 }, (_, i) => `paged ${i}`).sort());
    const pages = mock.requests.filter((q) => q.path === '/v2beta/labels');
    expect(pages).toHaveLength(5);
    for (const p of pages) expect(p.query).toContain('view=LABEL_VIEW_FULL');
  }, 120_000);
});

describe('a service that pages with a Link header (as GitHub does)', () => {
  let server: Server;
  let url = '';
  const seen: IncomingHttpHeaders[] = [];
  const cfg = tempConfigDir('opsctl-api-link-');
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(req.headers);
      const u = new URL(req.url ?? '/', url);
      const page = Number(u.searchParams.get('page') ?? '1');
      if (u.pathname === '/elsewhere') {
        res.setHeader('link', '<http://127.0.0.2:9/steal?page=2>; rel="next"');
        res.setHeader('content-type', 'application/json');
        res.end('[1]');
        return;
      }
      if (page < 3) res.setHeader('link', `<${url}/items?page=${page + 1}>; rel="next", <${url}/items?page=3>; rel="last"`);
      res.setHeader('content-type', 'application/json');
      res.setHeader('set-cookie', 'session=s3cr3t');
      res.end(JSON.stringify(Array.from({ length: 4 }, (_, i) => ({ n: (page - 1) * 4 + i }))));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    env = { OPSCTL_CONFIG_DIR: cfg.dir, OPSCTL_API_URL: url, OPSCTL_ACCESS_TOKEN: 'tok-abc-123' };
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    cfg.cleanup();
  });

  it('follows rel="next" to the last page; -H headers are sent on every page; -i redacts set-cookie', async () => {
    seen.length = 0;
    const r = await runBin(['api', '/items', '--paginate', '--slurp-items', '-H', 'X-Trace: abc', '-H', 'Accept: application/vnd.test+json'], { env });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(JSON.parse(String(r.stdout))).toEqual(Array.from({ length: 12 }, (_, n) => ({ n })));
    expect(seen).toHaveLength(3);
    for (const h of seen) {
      expect(h['x-trace']).toBe('abc');
      expect(h.accept).toBe('application/vnd.test+json');
      expect(h.authorization).toBe('Bearer tok-abc-123');
    }
    // gh's shape: the pages (each page here is an array)
    const pages = await runBin(['api', '/items', '--paginate', '--slurp'], { env });
    expect((JSON.parse(String(pages.stdout)) as unknown[][]).map((p) => p.length)).toEqual([4, 4, 4]);
    const inc = await runBin(['api', '/items', '-i'], { env });
    expect(String(inc.stdout)).toContain('Link: <');
    expect(String(inc.stdout)).toContain('Set-Cookie: [redacted]');
    expect(String(inc.stdout)).not.toContain('s3cr3t');
  }, 120_000);

  it('refuses to follow a next page on another origin (the credentials stay with the service)', async () => {
    const r = await runBin(['api', '/elsewhere', '--paginate'], { env });
    expect(r.exitCode).toBe(1);
    expect(String(r.stderr)).toContain('points its next page at http://127.0.0.2:9');
  }, 120_000);

  it('a bad -H is a usage error naming it', async () => {
    const r = await runBin(['api', '/items', '-H', 'no colon here'], { env });
    expect(r.exitCode).toBe(2);
    expect(String(r.stderr)).toContain('-H: "no colon here" is not a header');
  }, 120_000);
});

describe.runIf(ptyAvailable())('on a terminal', () => {
  it('--paginate --slurp --jq prints indented JSON a person reads; -i shows the status line first', async () => {
    const cfg = tempConfigDir('opsctl-api-pty-');
    try {
      const pty = PtySession.opsctl(['api', '/api/v3/labels', '--service', 'tracker', '-i'], { env: { OPSCTL_CONFIG_DIR: cfg.dir } });
      expect(await pty.exitCode(120_000)).toBe(0);
      expect(pty.text).toMatch(/HTTP\/1\.1 200 OK\r?\nContent-Type: application\/json/);
    } finally {
      cfg.cleanup();
    }
  }, 180_000);
});
