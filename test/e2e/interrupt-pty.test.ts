import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { requireProgram } from '../helpers/e2e.js';
import { runBin } from '../helpers/bin.js';
import { until } from '../helpers/kv.js';
import { PtySession, SCRIPT, type PtyOptions } from '../helpers/pty.js';
import { useTrackerMock } from '../helpers/tracker.js';
import type { TestState } from '../helpers/mock.js';
import { startCluster, type KvSandbox } from '../framework/index.js';

/**
 * The built binary on a real pseudo-terminal, interrupted the way a person does it: the Ctrl-C key
 * (\x03 typed into the terminal), which the terminal turns into SIGINT only while it is not in raw
 * mode. Every wait is for text on the screen, with generous timeouts; nothing asserts speed.
 */
const hasScript = requireProgram('script (util-linux, for the pty tests)', SCRIPT);
const FAST = ['--poll-interval', '50ms', '--healthy-timeout', '60s', '--stop-timeout', '30s'];
/** Sequences that move the cursor up or erase a line: a 0-column terminal must see none of them. */
const REDRAW = /\u001b\[\d*[AK]|\u001b\[2K/;

const sessions: PtySession[] = [];
function pty(args: string[], opts: PtyOptions) {
  const s = PtySession.opsctl(args, opts);
  sessions.push(s);
  return s;
}
afterEach(() => {
  for (const s of sessions.splice(0)) s.kill();
});

describe.runIf(hasScript)('on a real terminal: kv upgrade', () => {
  let sb: KvSandbox | undefined;
  afterEach(async () => {
    await sb?.down();
    sb = undefined;
  });

  async function sandbox() {
    sb = (await startCluster({ members: 'simulated', size: 3, version: '3.2' })).sandbox;
    return sb;
  }
  async function versions(s: NonNullable<typeof sb>) {
    const r = await s.kv('version', '--json');
    expect(r.code, r.stderr).toBe(0);
    return r.json<Array<{ name: string; server: string; cluster: string }>>();
  }

  it('Ctrl-C during the first settle stops at the safe point with 130, the cluster still on 3.2 and mixed; a re-run resumes and finishes', async () => {
    const s = await sandbox();
    const run = pty(['kv', 'upgrade', '--to', '3.3', '--yes', ...FAST, '--settle', '6s'], { env: s.env });
    await run.waitFor(/: settle/);
    run.ctrlC();
    expect(await run.exitCode()).toBe(130);
    expect(run.text).toContain('interrupted: stopping at the next safe point; press Ctrl-C again to quit at once');
    expect(run.text).toContain('kv upgrade interrupted at a safe point');
    // the spinner was drawn (a live terminal), and did not swallow the key
    expect(run.output).toContain('\r\u001b[2K');

    const j = s.journal();
    expect(j.status).toBe('interrupted');
    expect(j.steps.filter((st: any) => st.kind === 'start' && st.status === 'done')).toHaveLength(1);
    const mid = await versions(s);
    expect(mid.filter((v) => v.server.startsWith('3.3'))).toHaveLength(1);
    expect(mid.filter((v) => v.server.startsWith('3.2'))).toHaveLength(2);
    for (const v of mid) expect(v.cluster.startsWith('3.2')).toBe(true);

    const again = pty(['kv', 'upgrade', '--to', '3.3', '--yes', ...FAST, '--settle', '0s'], { env: s.env });
    expect(await again.exitCode()).toBe(0);
    expect(again.text).toContain('cluster upgraded to 3.3');
    for (const v of await versions(s)) expect(v.cluster.startsWith('3.3')).toBe(true);
  }, 240_000);

  it('a terminal of 0 columns: kv upgrade finishes with plain lines, no redraw loop', async () => {
    const s = await sandbox();
    const run = pty(['kv', 'upgrade', '--to', '3.3', '--yes', ...FAST, '--settle', '0s'], { env: s.env, cols: 0 });
    expect(await run.exitCode(), run.text).toBe(0);
    expect(run.text).toContain('cluster upgraded to 3.3');
    expect(run.output).not.toMatch(REDRAW);
    // bounded: a line per step (3 members × 7 steps + 2), not a loop
    const lines = run.text.split('\n').filter((l) => l.trim());
    expect(lines.length).toBeLessThan(200);
    expect(run.output.length).toBeLessThan(64 * 1024);
    for (const v of await versions(s)) expect(v.cluster.startsWith('3.3')).toBe(true);
  }, 240_000);
});

describe.runIf(hasScript)('on a real terminal: tracker', () => {
  const t = useTrackerMock((tracker) => {
    tracker.labels = [];
    tracker.stories = [];
  });
  let env: NodeJS.ProcessEnv;
  beforeEach(() => {
    env = { ...t.env, NO_COLOR: '1' };
  });

  it('Ctrl-C while apply waits for the rate limit: 130 with applied / in flight / not started, and nothing after the summary', async () => {
    const file = join(t.dir, 'labels.yaml');
    writeFileSync(file, Array.from({ length: 6 }, (_, i) => `- name: paced-${i}\n`).join(''));
    // 2 requests per 30 s: the list and one create go out, then the run waits on the pacer
    const run = pty(['tracker', 'labels', 'apply', '-f', file], { env: { ...env, OPSCTL_TRACKER_RATE_LIMIT: '2/30s' } });
    await run.waitFor('rate limit: waiting');
    run.ctrlC();
    expect(await run.exitCode()).toBe(130);
    const m = /interrupted: (\d+) of 6 changes applied, (\d+) failed, (\d+) in flight \(may or may not have been made\), (\d+) not started/.exec(run.text);
    expect(m, run.text).not.toBeNull();
    const [applied, failed, inFlight, notStarted] = m!.slice(1).map(Number) as [number, number, number, number];
    expect(failed).toBe(0);
    expect(applied + inFlight + notStarted).toBe(6);
    const created = t.mock.requests.filter((q) => q.method === 'POST').length;
    expect(created).toBeGreaterThanOrEqual(applied);
    expect(created).toBeLessThanOrEqual(applied + inFlight);
    // the summary and its hint end the output: no progress line, spinner frame or pacing notice after it
    // (between the first Ctrl-C's notice and the summary the spinner may still turn: the requests in flight end)
    const after = run.text.slice(m!.index);
    expect(after).not.toMatch(/\d+\/6 done|rate limit: waiting|… /);
    expect(run.text).not.toContain('unexpected error');
  }, 120_000);

  it('SIGTERM (e.g. a CI timeout) during the pacing wait: the same safe stop and counts, worded as a termination, no "press Ctrl-C"', async () => {
    const file = join(t.dir, 'labels.yaml');
    writeFileSync(file, Array.from({ length: 4 }, (_, i) => `- name: termed-${i}\n`).join(''));
    const child = runBin(['tracker', 'labels', 'apply', '-f', file], { env: { ...env, OPSCTL_TRACKER_RATE_LIMIT: '2/30s' } });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    await until(() => stderr.includes('rate limit: waiting'), 60_000, 'the pacing notice');
    child.kill('SIGTERM');
    const r = await child;
    expect(r.exitCode).toBe(130);
    expect(stderr).toContain('terminated (SIGTERM): stopping at the next safe point');
    expect(stderr).not.toContain('Ctrl-C');
    expect(stderr).toMatch(/interrupted: \d+ of 4 changes applied/);
  }, 120_000);

  it('Ctrl-C at a confirmation prompt exits 130 with "interrupted", and nothing is deleted', async () => {
    const story = await t.json('tracker', 'stories', 'create', '--name', 'keep me');
    t.mock.requests.length = 0;
    const run = pty(['tracker', 'stories', 'delete', String(story.id)], { env });
    await run.waitFor(`Delete story ${story.id}?`);
    run.ctrlC();
    expect(await run.exitCode()).toBe(130);
    expect(run.text).toMatch(/X interrupted/);
    expect(run.text).not.toContain('unexpected error');
    expect(run.text).not.toContain('force closed');
    expect(t.mock.requests.filter((q) => q.method === 'DELETE')).toEqual([]);
    expect((await t.cli('tracker', 'stories', 'get', String(story.id))).code).toBe(0);
  }, 60_000);

  it('a terminal of 0 columns: search --all over several pages finishes with a bounded output and a full table', async () => {
    const seed = await t.json('tracker', 'stories', 'create', '--name', 'x story 0');
    await t.mock.store.write((s: TestState) => {
      const base = s.tracker.stories.find((x: any) => x.id === seed.id);
      for (let i = 1; i < 60; i++) s.tracker.stories.push({ ...base, id: 2_000_000 + i, name: `x story ${i} ${'long words '.repeat(12)}`.trim() });
    });
    const run = pty(['tracker', 'search', 'stories', '--query', 'x', '--all', '--page-size', '10'], { env, cols: 0 });
    expect(await run.exitCode()).toBe(0);
    expect(run.output).not.toMatch(REDRAW);
    expect(run.output.length).toBeLessThan(64 * 1024);
    const rows = run.text.split('\n').filter((l) => /x story \d+/.test(l));
    expect(rows).toHaveLength(60);
    // width unknown: cells are not cut
    expect(run.text).toContain(`x story 59 ${'long words '.repeat(12)}`.trim());
  }, 120_000);
});

/**
 * A loopback proxy in front of the tracker mock: every request forwarded at once, and the answer of the
 * `nth` bulk create held back once the mock has made its stories (`made` resolves then) until the test
 * releases it (`release`) or cuts its connection (`drop`): a bulk create in flight when Ctrl-C comes.
 */
async function holdingProxy(target: string, nth: number) {
  let bulks = 0;
  let onMade!: () => void;
  const made = new Promise<void>((r) => (onMade = r));
  let open!: (how: 'release' | 'drop') => void;
  const gate = new Promise<'release' | 'drop'>((r) => (open = r));
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        if (typeof v === 'string' && !['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive'].includes(k)) headers[k] = v;
      const body = Buffer.concat(chunks);
      const up = await fetch(`${target}${req.url}`, { method: req.method, headers, body: body.length ? new Uint8Array(body) : undefined });
      const text = await up.text();
      if (req.method === 'POST' && req.url?.startsWith('/api/v3/stories/bulk') && ++bulks === nth) {
        onMade();
        if ((await gate) === 'drop') return void req.socket.destroy();
      }
      res.writeHead(up.status, { 'content-type': up.headers.get('content-type') ?? 'application/json' });
      res.end(text);
    })().catch(() => req.socket.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    made,
    release: () => open('release'),
    drop: () => open('drop'),
    close: () => new Promise<void>((r) => server.close(() => r())).finally(() => server.closeAllConnections()),
  };
}

describe.runIf(hasScript)('on a real terminal: Ctrl-C while a stories import has a bulk create in flight', () => {
  const t = useTrackerMock((tracker) => {
    tracker.stories = [];
  });
  let proxy: Awaited<ReturnType<typeof holdingProxy>> | undefined;
  afterEach(async () => {
    proxy?.release();
    await proxy?.close();
    proxy = undefined;
  });
  /** 250 stories: bulk creates of 100, 100 and 50; the answer of the second held by the proxy. */
  async function started() {
    const file = join(t.dir, 'stories.yaml');
    writeFileSync(file, `stories:\n${Array.from({ length: 250 }, (_, i) => `  - {external_id: "cc-${i}", name: "Story ${i}"}`).join('\n')}\n`);
    proxy = await holdingProxy(t.mock.url, 2);
    const env = { ...t.env, OPSCTL_TRACKER_URL: proxy.url, NO_COLOR: '1' };
    const run = pty(['tracker', 'stories', 'import', '-f', file], { env });
    await Promise.race([
      proxy.made,
      run.exited.then(() => Promise.reject(new Error(`the import ended before its second bulk create was made:\n${run.text}`))),
      until(() => false, 60_000, `the second bulk create to be made; the terminal showed:\n${run.text}`),
    ]);
    const held = await t.mock.store.read((s: TestState) => s.tracker.stories.length as number);
    expect(held).toBe(200);
    return { file, env, run, proxy };
  }
  /** What the next dry run (the built binary, piped) says exists. */
  async function dryRun(file: string, env: NodeJS.ProcessEnv) {
    const r = await runBin(['tracker', 'stories', 'import', '-f', file, '--dry-run'], { env });
    expect(r.exitCode, String(r.stderr)).toBe(0);
    return String(r.stderr);
  }

  it('the count says what the service holds: the bulk create in flight is waited for and counted ("200 of 250 created"), as the next dry run finds', async () => {
    const { file, env, run, proxy: p } = await started();
    run.ctrlC();
    await run.waitFor('stopping at the next safe point');
    p.release();
    expect(await run.exitCode()).toBe(130);
    expect(run.text).toContain('200 of 250 created (every bulk request sent was answered), 50 not sent');
    expect(run.text).toContain('run the same import again: it matches the stories that exist by external_id');
    expect(run.text).not.toMatch(/\b100 of 250 created/);
    // the third bulk create was never sent
    expect(t.mock.requests.filter((q) => q.path === '/api/v3/stories/bulk')).toHaveLength(2);
    expect(await dryRun(file, env)).toContain('plan: 50 to create in 1 bulk request(s), 200 already exist');
  }, 120_000);

  it('its answer lost after Ctrl-C (the connection cut): "at least 100, up to 200 of 250 created", never a bare 100', async () => {
    const { file, env, run, proxy: p } = await started();
    run.ctrlC();
    await run.waitFor('stopping at the next safe point');
    p.drop();
    expect(await run.exitCode()).toBe(130);
    expect(run.text).toContain('at least 100, up to 200 of 250 created (the last bulk request of 100 was sent and its answer lost)');
    expect(run.text).toContain('50 not sent');
    expect(await dryRun(file, env)).toContain('200 already exist');
  }, 120_000);

  it('a second Ctrl-C quits at once, its last words "at least 100, up to 200 of 250 created"', async () => {
    const { run } = await started();
    run.ctrlC();
    await run.waitFor('stopping at the next safe point');
    run.ctrlC();
    expect(await run.exitCode()).toBe(130);
    expect(run.text).toContain('interrupted again: quitting now');
    expect(run.text).toContain('quit: at least 100, up to 200 of 250 created');
  }, 120_000);
});
