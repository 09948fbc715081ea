import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runBin } from '../helpers/bin.js';
import { requireChromium, withChromiumPage } from '../helpers/chromium.js';
import { tempConfigDir } from '../helpers/cli.js';

/**
 * `kv upgrade --report FILE.html` and `kv status --report FILE.html` through the built binary on a
 * simulated 3-member sandbox, and the page opened in real Chromium: it renders every member's plan
 * row and down window, every step, the snapshots' hashes and the cluster version step; it has no
 * script and loads nothing but itself. A halted run's page shows the halt and the open down window.
 */
describe.runIf(requireChromium())('kv upgrade report (built binary, real Chromium)', () => {
  let cfg: ReturnType<typeof tempConfigDir>;
  const kv = (...args: string[]) => runBin(['kv', ...args], { env: { OPSCTL_CONFIG_DIR: cfg.dir, CI: '1' }, timeout: 120_000 });
  const FAST = ['--settle', '0s', '--poll-interval', '25ms'];

  beforeEach(async () => {
    cfg = tempConfigDir('opsctl-kv-report-');
    const up = await kv('sandbox', 'up', '--members', '3', '--version', '3.2');
    expect(up.exitCode, String(up.stderr)).toBe(0);
  });
  afterEach(async () => {
    await kv('sandbox', 'down');
    cfg.cleanup();
  });

  /** Opens a report in Chromium; returns what a reader sees, every request the page made, and a screenshot. */
  const view = (file: string) =>
    withChromiumPage(async (page) => {
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
          barWidth: (l.querySelector('.bar') as HTMLElement | null)?.getBoundingClientRect().width ?? 0,
          open: Boolean(l.querySelector('.bar.open')),
          label: l.querySelector('.blabel')?.textContent ?? l.querySelector('.none')?.textContent,
        })),
        steps: [...document.querySelectorAll('#steps tbody tr')].map((tr) => tr.getAttribute('data-step')),
        hashes: [...document.querySelectorAll('#snapshots .hash')].map((c) => c.textContent),
        clusterVersion: document.querySelector('#cluster-version')?.textContent ?? '',
        halt: document.querySelector('.halt')?.textContent ?? '',
        rollback: [...document.querySelectorAll('#rollback tbody tr')].map((tr) => tr.textContent),
      }));
      const png = join(cfg.dir, 'report.png');
      await page.setViewportSize({ width: 1280, height: 900 });
      await page.screenshot({ path: png, fullPage: true });
      if (process.env.OPSCTL_REPORT_SCREENSHOT) writeFileSync(process.env.OPSCTL_REPORT_SCREENSHOT, readFileSync(png));
      return { ...seen, requests };
    });

  it('a finished upgrade: members, down windows, steps, snapshot hashes and the cluster version step render; status --report gives the same page', async () => {
    const file = join(cfg.dir, 'upgrade.html');
    const r = await kv('upgrade', '--to', '3.3', '--yes', ...FAST, '--report', file, '--json');
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(String(r.stderr)).toContain(`report: ${file}`);
    const out = JSON.parse(String(r.stdout));
    const doc = out.report;
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
  }, 120_000);

  it('a halted upgrade: the page shows the halt and the member that is not back; no journal means a clear error', async () => {
    const none = await kv('status', '--report', join(cfg.dir, 'none.html'));
    expect(none.exitCode).toBe(1);
    expect(String(none.stderr)).toMatch(/no kv upgrade is recorded for this cluster \(no journal at .*journals/);
    expect(existsSync(join(cfg.dir, 'none.html'))).toBe(false);

    const spec = JSON.parse(readFileSync(join(cfg.dir, 'data', 'kv', 'sandbox', 'sandbox.json'), 'utf8'));
    for (const m of spec.members) writeFileSync(join(m.dataDir, 'FAULT.json'), JSON.stringify({ neverHealthyOn: '3.3' }));
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
  }, 120_000);
});
