import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { PAUSED, runBin } from '../helpers/bin.js';
import { chromiumSession, requireChromium } from '../helpers/chromium.js';
import { tempConfigDir } from '../helpers/cli.js';
import { startCluster, type SimulatedTestCluster } from '../framework/index.js';

/**
 * `kv upgrade --report FILE.html` and `kv status --report FILE.html` through the built binary on a
 * simulated 3-member sandbox, and the page opened in real Chromium: it renders every member's plan
 * row and down window, every step, the snapshots' hashes and the cluster version step; it has no
 * script and loads nothing but itself. A halted run's page shows the halt and the open down window.
 */
describe.runIf(requireChromium())('kv upgrade report (built binary, real Chromium)', () => {
  let cfg: ReturnType<typeof tempConfigDir>;
  let c: SimulatedTestCluster | undefined;
  const kv = (...args: string[]) => runBin(['kv', ...args], { env: { OPSCTL_CONFIG_DIR: cfg.dir, CI: '1' }, timeout: 120_000 });
  const FAST = ['--settle', '0s', '--poll-interval', '25ms'];

  beforeEach(async () => {
    cfg = tempConfigDir('opsctl-kv-report-');
    c = await startCluster({ members: 'simulated', size: 3, version: '3.2', configDir: cfg.dir });
  });
  afterEach(async () => {
    await c?.destroy();
    cfg.cleanup();
  });

  const chromium = chromiumSession();
  afterAll(() => chromium.close());

  /** Opens a report in Chromium (a fresh context of the file's one browser); returns what a reader sees, every request the page made, and a screenshot. */
  const view = (file: string) =>
    chromium.page(async (page) => {
      const requests: string[] = [];
      page.on('request', (r) => requests.push(r.url()));
      await page.goto(pathToFileURL(file).href);
      const seen = await page.evaluate(() => ({
        scripts: document.scripts.length,
        status: document.querySelector('#status')?.textContent,
        plan: [...document.querySelectorAll('#plan tbody tr')].map((tr) => tr.getAttribute('data-member')),
        lanes: [...document.querySelectorAll('#timeline .lane')].map((l) => ({
          member: l.getAttribute('data-member'),
          // the bar is drawn: a visible box with a width
          barWidth: l.querySelector<HTMLElement>('.bar')?.getBoundingClientRect().width ?? 0,
          open: Boolean(l.querySelector('.bar.open')),
          label: l.querySelector('.blabel')?.textContent ?? l.querySelector('.none')?.textContent,
        })),
        steps: [...document.querySelectorAll('#steps tbody tr')].map((tr) => tr.getAttribute('data-step')),
        hashes: [...document.querySelectorAll('#snapshots .hash')].map((c) => c.textContent),
        clusterVersion: document.querySelector('#cluster-version')?.textContent ?? '',
        halt: document.querySelector('.halt')?.textContent ?? '',
        rollback: [...document.querySelectorAll('#rollback tbody tr')].map((tr) => tr.textContent),
        interruptions: [...document.querySelectorAll('#interruptions tbody tr[data-how]')].map((tr) => ({
          how: tr.getAttribute('data-how'),
          text: tr.textContent ?? '',
        })),
        gaps: document.querySelectorAll('#timeline .gap').length,
        restore: [...document.querySelectorAll('#restore-points .cmd')].map((c) => c.textContent),
        backups: document.querySelector('#backups-total')?.textContent ?? '',
      }));
      const png = join(cfg.dir, 'report.png');
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.screenshot({ path: png, fullPage: true });
      if (process.env.OPSCTL_REPORT_SCREENSHOT) writeFileSync(process.env.OPSCTL_REPORT_SCREENSHOT, readFileSync(png));
      return { ...seen, requests };
    });

  it('a finished upgrade: members, down windows, steps, snapshot hashes and the cluster version step render; status --report gives the same page', async () => {
    const file = join(cfg.dir, 'upgrade.html');
    // --keep-backups: the data-dir copies stay once the hop is done (by default they go then: below)
    const r = await kv('upgrade', '--to', '3.3', '--yes', ...FAST, '--keep-backups', '--report', file, '--json');
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(String(r.stderr)).toContain(`report: ${file}`);
    const out = JSON.parse(String(r.stdout));
    const doc = out.report;
    // the summary's backups: 3 snapshots and 3 data-dir copies, their total and their directories
    expect(out.backups.items.map((i: any) => i.kind).sort()).toEqual(['data-dir', 'data-dir', 'data-dir', 'snapshot', 'snapshot', 'snapshot']);
    expect(out.backups.bytes).toBe(out.backups.items.reduce((n: number, i: any) => n + i.bytes, 0));
    expect([...out.backups.dirs].sort()).toEqual([join(cfg.dir, 'data', 'kv', 'backups', doc.cluster), join(cfg.dir, 'data', 'kv', 'snapshots', doc.cluster)]);
    expect(doc.backups).toEqual(out.backups);
    expect(doc.kind).toBe('opsctl-kv-upgrade-report');
    expect(doc.status).toBe('done');
    expect(doc.members.map((m: any) => m.name).sort()).toEqual(['kv1', 'kv2', 'kv3']);
    for (const m of doc.members) {
      expect(m.down.ms).toBeGreaterThanOrEqual(0);
      expect(Date.parse(m.down.to)).toBeGreaterThanOrEqual(Date.parse(m.down.from));
    }
    // The down windows never overlap: one member at a time.
    const windows = doc.members
      .map((m: any) => [Date.parse(m.down.from), Date.parse(m.down.to)])
      .sort((a: [number, number], b: [number, number]) => a[0] - b[0]);
    for (let i = 1; i < windows.length; i++) expect(windows[i][0]).toBeGreaterThanOrEqual(windows[i - 1][1]);
    // Each hash is the snapshot file's own SHA-256 of its content (its trailer, verified when taken).
    expect(doc.snapshots).toHaveLength(3);
    for (const s of doc.snapshots) {
      const data = readFileSync(s.file);
      expect(s.sha256).toBe(
        createHash('sha256')
          .update(data.subarray(0, data.length - 32))
          .digest('hex'),
      );
    }
    expect(doc.clusterVersion).toMatchObject({ from: '3.2', to: '3.3', status: 'done' });

    // After the fact, from the journal alone: the same data and the same page.
    const again = join(cfg.dir, 'again.html');
    const st = await kv('status', '--report', again, '--json');
    expect(st.exitCode, String(st.stderr)).toBe(0);
    expect(JSON.parse(String(st.stdout))).toEqual(doc);
    expect(readFileSync(again, 'utf8')).toBe(readFileSync(file, 'utf8'));

    const html = readFileSync(file, 'utf8');
    expect(html).not.toMatch(/<script|<link|src=|url\(/i);
    const seen = await view(file);
    expect(seen.scripts).toBe(0);
    expect(seen.requests).toEqual([pathToFileURL(file).href]);
    expect(seen.status).toBe('done');
    expect(seen.plan).toEqual(doc.plan.map((p: any) => p.name));
    expect(seen.lanes.map((l) => l.member)).toEqual(doc.members.map((m: any) => m.name));
    for (const l of seen.lanes) {
      expect(l.barWidth).toBeGreaterThan(0);
      expect(l.open).toBe(false);
      expect(l.label).toMatch(/^down \d/);
    }
    expect(seen.steps).toHaveLength(21);
    expect(seen.steps).toContain('kv1/wait-healthy');
    expect(seen.hashes).toEqual(doc.snapshots.map((s: any) => s.sha256));
    expect(seen.clusterVersion).toMatch(/3\.2 → 3\.3: done/);

    // The human summary names the backups too (an upgrade with nothing left to do makes none).
    const human = await kv('upgrade', '--to', '3.3', '--yes', ...FAST, '--allow-same-version');
    expect(human.exitCode, String(human.stderr)).toBe(0);
    expect(String(human.stdout)).toMatch(
      /\nbackups made: \d+(\.\d)? k?B \(3 snapshots, 3 data-dir copies here\) in .*kv\/snapshots\/.*; see them with opsctl kv backups list\nbackups held: \d+(\.\d)? k?B \(\d+ bytes\) on disk in 1 snapshot; by default a finished run keeps its restore point .*\n3 data-dir copies removed once their hops were done \(the hop's restore point is the way back; --keep-backups keeps them\)/,
    );
  }, 300_000);

  it('a halted upgrade: the page shows the halt and the member that is not back; no journal means a clear error', async () => {
    const none = await kv('status', '--report', join(cfg.dir, 'none.html'));
    expect(none.exitCode).toBe(1);
    expect(String(none.stderr)).toMatch(/no kv upgrade is recorded for this cluster \(no journal at .*journals/);
    expect(existsSync(join(cfg.dir, 'none.html'))).toBe(false);

    const spec = JSON.parse(readFileSync(join(cfg.dir, 'data', 'kv', 'sandbox', 'sandbox.json'), 'utf8'));
    for (const m of spec.members) writeFileSync(join(m.dataDir, 'CONDITIONS.json'), JSON.stringify({ neverHealthyOn: '3.3' }));
    const file = join(cfg.dir, 'halted.html');
    const r = await kv('upgrade', '--to', '3.3', '--yes', ...FAST, '--healthy-timeout', '2s', '--report', file);
    expect(r.exitCode, String(r.stderr)).toBe(3);
    const seen = await view(file);
    expect(seen.status).toBe('halted');
    expect(seen.halt).toMatch(/did not become healthy on 3\.3/);
    expect(seen.halt).toContain('opsctl kv rollback');
    const open = seen.lanes.filter((l) => l.open);
    expect(open).toHaveLength(1);
    expect(open[0]!.label).toBe('down: not back (yet)');
    expect(seen.lanes.filter((l) => l.label === 'not stopped')).toHaveLength(2);
    expect(seen.rollback).toEqual([]);
    const rb = await kv('rollback', '--poll-interval', '25ms');
    expect(rb.exitCode, String(rb.stderr)).toBe(0);
    // After the roll-back, the report from the journal shows it.
    const after = join(cfg.dir, 'after.html');
    expect((await kv('status', '--report', after)).exitCode).toBe(0);
    const back = await view(after);
    expect(back.status).toBe('rolled-back');
    expect(back.rollback).toHaveLength(1);
    expect(back.rollback[0]).toMatch(/^kv\d3\.2/);
  }, 300_000);

  /** The journal of the sandbox's upgrade, as the run left it on disk. */
  const journalNow = () => {
    const dir = join(cfg.dir, 'data', 'kv', 'journals');
    try {
      const f = readdirSync(dir).find((n) => n.endsWith('.json'));
      return f ? JSON.parse(readFileSync(join(dir, f), 'utf8')) : undefined;
    } catch {
      return undefined; // (between the temp file and its rename)
    }
  };
  const until = async (what: string, ok: () => boolean, ms = 120_000) => {
    const end = Date.now() + ms;
    while (!ok()) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const child = (args: string[], env: Record<string, string> = {}) =>
    execa(process.execPath, [PAUSED, 'kv', ...args], { reject: false, env: { OPSCTL_CONFIG_DIR: cfg.dir, CI: '1', ...env }, timeout: 180_000 });

  it('an interrupted and resumed run: the report shows the Ctrl-C and the kill -9 with their resumes; the resume says what is done and what is left', async () => {
    // Run 1: Ctrl-C while the first member settles (a 60 s settle: a wide window).
    const first = child(['upgrade', '--to', '3.3', '--yes', '--settle', '60s', '--poll-interval', '25ms']);
    await until('the first member back on 3.3', () => Boolean(journalNow()?.steps?.some((st: any) => st.kind === 'wait-healthy' && st.status === 'done')));
    first.kill('SIGINT');
    expect((await first).exitCode).toBe(130);
    expect(journalNow().status).toBe('interrupted');

    // Run 2: kill -9 right after the second member's start was recorded.
    const second = child(['upgrade', '--to', '3.3', '--yes', ...FAST], { OPSCTL_PAUSE: 'pause:after-record:#1' });
    let err = '';
    await new Promise<void>((res) => {
      second.stderr?.on('data', (b: Buffer) => {
        err += String(b);
        if (/opsctl-test: kv\d after-record/.test(err)) res();
      });
      void second.then(() => res());
    });
    expect(err, err).toMatch(/opsctl-test: kv\d after-record/);
    // The resume said what was done and what was left before it went on.
    expect(err).toMatch(/Resuming the upgrade 3\.2 → 3\.3 recorded in .*\n {2}stopped: Ctrl-C \(SIGINT\)/);
    expect(err).toMatch(
      /done: no member yet\n {2}left: kv\d \(from its settle step: back on 3\.3, its settle left\), kv\d, kv\d, then the cluster version and a final health pass/,
    );
    second.kill('SIGKILL');
    await second;

    // Run 3: finishes, with the report.
    const file = join(cfg.dir, 'resumed.html');
    const r = await kv('upgrade', '--to', '3.3', '--yes', ...FAST, '--report', file, '--json');
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const out = JSON.parse(String(r.stdout));
    // run 2 settled the first member and was killed after the second one's start: one done, one in flight, one left
    expect(out.resume).toMatchObject({ hop: '3.2 → 3.3', inFlight: { next: 'start', stopped: true } });
    expect(out.resume.stopped.how).toMatch(/ended without a word: kill -9/);
    expect(out.resume.done).toHaveLength(1);
    expect(out.resume.left).toHaveLength(1);
    expect(String(r.stderr)).toMatch(/done: kv\d \(on 3\.3\)\n {2}left: kv\d \(from its start step: stopped, not yet back on 3\.3\), kv\d, then/);
    const doc = out.report;
    expect(doc.status).toBe('done');
    expect(doc.runs).toHaveLength(3);
    expect(doc.interruptions.map((i: any) => i.how)).toEqual(['interrupted', 'killed']);
    expect(doc.interruptions[0].detail).toMatch(/SIGINT/);
    expect(doc.interruptions[1].detail).toMatch(/ended without a word: kill -9/);
    for (const i of doc.interruptions) expect(Date.parse(i.resumedAt)).toBeGreaterThanOrEqual(Date.parse(i.stoppedAt));
    expect(doc.restorePoints).toHaveLength(1);
    expect(doc.restorePoints[0].command).toBe(`opsctl kv restore --snapshot ${doc.restorePoints[0].file} --to-version 3.2`);
    expect(doc.backups.bytes).toBeGreaterThan(0);
    expect(doc.backups.dirs.some((d: string) => d.endsWith(join('kv', 'snapshots', doc.cluster)))).toBe(true);
    const seen = await view(file);
    expect(seen.status).toBe('done');
    expect(seen.interruptions.map((i) => i.how)).toEqual(['interrupted', 'killed']);
    expect(seen.interruptions[0]!.text).toMatch(/interrupted \(signal\)/);
    expect(seen.gaps).toBeGreaterThanOrEqual(2 * 3);
    expect(seen.lanes.every((l) => !l.open && /^down \d/.test(l.label ?? ''))).toBe(true);
    expect(seen.restore).toEqual([doc.restorePoints[0].command]);
    expect(seen.backups).toMatch(/B \(\d[\d,]* bytes\) in \d+ item/);
  }, 300_000);

  it('an --on-failure rollback run: the member put back is drawn back on 3.2, not down', async () => {
    const spec = JSON.parse(readFileSync(join(cfg.dir, 'data', 'kv', 'sandbox', 'sandbox.json'), 'utf8'));
    for (const m of spec.members) writeFileSync(join(m.dataDir, 'CONDITIONS.json'), JSON.stringify({ neverHealthyOn: '3.3' }));
    const file = join(cfg.dir, 'rollback.html');
    const r = await kv('upgrade', '--to', '3.3', '--yes', ...FAST, '--healthy-timeout', '2s', '--on-failure', 'rollback', '--report', file, '--json');
    expect(r.exitCode, String(r.stderr)).toBe(3);
    const doc = JSON.parse(String(r.stdout)).report;
    const back = doc.members.filter((m: any) => m.down);
    expect(back).toHaveLength(1);
    expect(back[0].down.back).toEqual({ on: '3.2', by: '--on-failure rollback' });
    expect(back[0].down.ms).toBeGreaterThan(0);
    const seen = await view(file);
    expect(seen.status).toBe('halted');
    expect(seen.lanes.filter((l) => l.open)).toEqual([]);
    const drawn = seen.lanes.find((l) => l.member === back[0].name)!;
    expect(drawn.barWidth).toBeGreaterThan(0);
    expect(drawn.label).toMatch(/^down \d+(\.\d)? (ms|s), back on 3\.2 \(--on-failure rollback\)$/);
  }, 300_000);

  it('a ladder run (3.2 → 3.4): the report shows both hops, the first one folded with its own report, and the backups of both', async () => {
    const file = join(cfg.dir, 'ladder.html');
    const r = await kv('upgrade', '--to', '3.4', '--yes', ...FAST, '--report', file, '--json');
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const out = JSON.parse(String(r.stdout));
    const doc = out.report;
    expect(doc.ladder).toMatchObject({ from: '3.2', to: '3.4', status: 'done' });
    expect(doc.ladder.hops.map((h: any) => `${h.name}:${h.status}`)).toEqual(['3.2 → 3.3:done', '3.3 → 3.4:done']);
    expect(doc.ladder.hops[0].report.hop).toBe('3.2 → 3.3');
    expect(doc.hop).toBe('3.3 → 3.4');
    expect(doc.restorePoints.map((p: any) => p.hop)).toEqual(['3.2 → 3.3', '3.3 → 3.4']);
    expect(doc.restorePoints[1].command).toMatch(/--to-version 3\.3$/);
    // each hop keeps its own restore point of its three snapshots once it is done
    expect(doc.backups.items.filter((i: any) => i.kind === 'snapshot')).toHaveLength(2);
    expect(doc.backups.made).toMatchObject({ snapshots: 6, copies: 6 });
    expect(doc.backups.held).toMatchObject({ snapshots: 2, copies: 0 });
    expect(out.backups.bytes).toBe(doc.backups.bytes);
    const seen = await chromium.page(async (page) => {
      await page.goto(pathToFileURL(file).href);
      return page.evaluate(() => ({
        hops: [...document.querySelectorAll('#ladder tbody tr')].map((tr) => tr.getAttribute('data-hop')),
        folded: [...document.querySelectorAll('details.hop')].map((d) => d.getAttribute('data-hop')),
      }));
    });
    expect(seen.hops).toEqual(['3.2 → 3.3', '3.3 → 3.4']);
    expect(seen.folded).toEqual(['3.2 → 3.3']);
  }, 240_000);
});
