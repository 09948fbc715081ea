import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { startMock, trackerEnv } from '../helpers/mock.js';
import { mintToken } from '../helpers/labels.js';

/**
 * Issue 27, item 10f, through the built binary: an apply file under its cap, tracker and labels, JSON
 * and YAML, is planned with the peak memory of the process bounded (VmHWM from /proc, read until it
 * exits), never by wall time: at most ~10 times the file above the same command's baseline (a
 * one-record file), or under DESIGN's 100 MB budget where the cap was shrunk to what fits (YAML
 * 128 KiB; labels apply 512 KiB). A file over its cap, or too dense to parse within the bound, is
 * refused at once naming the file, its size, the cap and the way out, exit 2, nothing sent.
 */
let mock: Awaited<ReturnType<typeof startMock>>;
let dir: string;
let env: NodeJS.ProcessEnv;
const MB = 1024 * 1024;
const KiB = 1024;

/** Runs the built binary and follows its peak resident memory (VmHWM, which only grows) in /proc until it exits. */
async function runMeasured(args: string[], extra: NodeJS.ProcessEnv = {}) {
  const child = execa(process.execPath, [BIN, ...args], { reject: false, env: { NO_COLOR: '1', ...env, ...extra }, extendEnv: true });
  let peakKb = 0;
  const look = () => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (m) peakKb = Math.max(peakKb, Number(m[1]));
    } catch {
      // gone
    }
  };
  const timer = setInterval(look, 20);
  const r = await child;
  clearInterval(timer);
  look();
  return { code: r.exitCode, stdout: String(r.stdout), stderr: String(r.stderr), peakMb: peakKb / 1024 };
}

beforeAll(async () => {
  mock = await startMock({ services: ['tracker', 'labels'] });
  await mock.service('labels');
  dir = mkdtempSync(join(tmpdir(), 'opsctl-small-apply-mem-'));
  env = { ...trackerEnv(mock, join(dir, 'config')), OPSCTL_LABELS_URL: mock.url, OPSCTL_ACCESS_TOKEN: await mintToken(mock) };
});
afterAll(async () => {
  await mock.close();
  rmSync(dir, { recursive: true, force: true });
});

const label = (i: number) => ({
  name: `label-${String(i).padStart(7, '0')}`,
  description: `some description text for label number ${i} padding padding`,
  color: '#336699',
});
const driveLabel = (i: number) => ({
  title: `Label ${i}`,
  description: `description of label ${i} some padding text`,
  fields: [
    { name: 'Level', type: 'selection', choices: ['Low', 'High'] },
    { name: 'Review', type: 'date' },
  ],
});

/** A file of as many entries as fit under `bytes`, written by `entry` (one text per entry) between `head` and `tail`. */
function fileUnder(name: string, bytes: number, head: string, entry: (i: number) => string, sep: string, tail: string): { file: string; size: number } {
  const parts: string[] = [];
  let n = head.length + tail.length;
  for (let i = 0; ; i++) {
    const e = entry(i);
    if (n + e.length + sep.length > bytes) break;
    parts.push(e);
    n += e.length + sep.length;
  }
  const file = join(dir, name);
  writeFileSync(file, `${head}${parts.join(sep)}${tail}`);
  return { file, size: statSync(file).size };
}

const trackerYaml = (i: number) => {
  const l = label(i);
  return `  - name: ${l.name}\n    description: "${l.description}"\n    color: "${l.color}"`;
};
const labelsYaml = (i: number) =>
  `- title: Label ${i}\n  description: description of label ${i} some padding text\n  fields:\n    - {name: Level, type: selection, choices: [Low, High]}\n    - {name: Review, type: date}`;

/** The peak of the same command on a one-record file: node, the bundle and the command's own modules. */
async function baseline(args: (file: string) => string[], name: string, text: string): Promise<number> {
  const file = join(dir, name);
  writeFileSync(file, text);
  const r = await runMeasured(args(file));
  expect(r.code, r.stderr.slice(-500)).toBe(0);
  return r.peakMb;
}

const tracker = (file: string) => ['tracker', 'labels', 'apply', '-f', file, '--dry-run'];
const labels = (file: string) => ['labels', 'apply', '-f', file, '--dry-run'];
const sent = () => mock.requests.filter((q) => q.method !== 'GET');

describe('apply files under their caps: bounded memory', () => {
  it('tracker JSON, 15 MB (under the 16 MiB cap): planned at most ~10 times the file above the baseline', { timeout: 300_000 }, async () => {
    const base = await baseline(tracker, 'one.json', JSON.stringify({ labels: [label(0)] }));
    const file = join(dir, 'labels.json');
    writeFileSync(file, JSON.stringify({ labels: Array.from({ length: 131_000 }, (_, i) => label(i)) }));
    const size = statSync(file).size;
    expect(size).toBeGreaterThan(15 * MB);
    expect(size).toBeLessThan(16 * MB);
    // The JS heap capped at 10 times the file: V8 must collect rather than grow, so a busy machine (where
    // its background collector lags and the heap grows further) cannot change the outcome; it completes
    // only if the plan's working set really fits.
    const r = await runMeasured(tracker(file), { NODE_OPTIONS: `--max-old-space-size=${Math.ceil((10 * size) / MB)}` });
    expect(r.code, r.stderr.slice(-500)).toBe(0);
    expect(r.stderr).toContain('dry run: 131000 writes planned, none made');
    expect(r.stdout.split('\n').filter((l) => l.startsWith('create\t'))).toHaveLength(131_000);
    // measured: 184 MB against a baseline of 65 MB (7.5x); before, 301 MB (15x: the plan printed as one
    // string, a copy of every record for its body)
    expect(r.peakMb - base, `peak ${r.peakMb.toFixed(0)} MB, baseline ${base.toFixed(0)} MB`).toBeLessThan((10 * size) / MB);
    expect(sent()).toEqual([]);
  });

  it('YAML just under 128 KiB, tracker and labels, and labels JSON just under 512 KiB: planned under 100 MB', { timeout: 300_000 }, async () => {
    const cases = [
      { args: tracker, ...fileUnder('labels.yaml', 128 * KiB, 'labels:\n', trackerYaml, '\n', '\n') },
      { args: labels, ...fileUnder('drive.yaml', 128 * KiB, '', labelsYaml, '\n', '\n') },
      { args: labels, ...fileUnder('drive.json', 512 * KiB, '[', (i) => JSON.stringify(driveLabel(i)), ',', ']') },
    ];
    for (const c of cases) {
      const r = await runMeasured(c.args(c.file));
      expect(r.code, r.stderr.slice(-500)).toBe(0);
      expect(r.stderr).toMatch(/dry run: (\d+ writes planned, none made|nothing sent)/);
      expect(c.size).toBeGreaterThan(0.9 * (c.file.endsWith('.json') ? 512 : 128) * KiB);
      // measured: 85 MB (tracker YAML), 94 MB (labels YAML), 83 MB (labels JSON); before, 1 MiB of
      // YAML peaked at 156 MB (tracker) and a 3.7 MB labels JSON at 153 MB
      expect(r.peakMb, `${c.args(c.file).join(' ')}: ${c.size} bytes`).toBeLessThan(100);
    }
    expect(sent()).toEqual([]);
  });
});

describe('over the cap or too dense: refused at once, exit 2, nothing sent', () => {
  it('YAML over 128 KiB: the size, the cap and the way out (JSON or split), tracker and labels', { timeout: 120_000 }, async () => {
    const { file } = fileUnder('big.yaml', 200 * KiB, 'labels:\n', trackerYaml, '\n', '\n');
    for (const args of [tracker(file), labels(file)]) {
      const r = await runMeasured(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain(`${file}: is `);
      expect(r.stderr).toMatch(/: is (199\.\d|200) KiB of YAML: YAML files are read up to 128 KiB/);
      expect(r.stderr).toMatch(/write it as JSON \(read up to (16 MiB|512 KiB)\), e\.g\. with --json, or split it into files under 128 KiB/);
      expect(r.peakMb).toBeLessThan(100);
    }
    expect(sent()).toEqual([]);
  });

  it('labels JSON over 512 KiB: the size, the cap and the way out (split)', { timeout: 120_000 }, async () => {
    const { file } = fileUnder('drive-big.json', 2 * MB, '[', (i) => JSON.stringify(driveLabel(i)), ',', ']');
    const r = await runMeasured(labels(file));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file}: is 2 MiB of JSON: this command reads apply files up to 512 KiB`);
    expect(r.stderr).toContain('split it into files under 512 KiB and apply each; nothing was sent');
    expect(r.peakMb).toBeLessThan(100);
    expect(sent()).toEqual([]);
  });

  it('a 15 MB JSON file of {} (one value per 3 bytes): refused as dense before parsing; before, 2.2 GB and 38 s', { timeout: 120_000 }, async () => {
    const file = join(dir, 'dense.json');
    writeFileSync(file, `{"labels": [${Array(5_000_000).fill('{}').join(',')}]}`);
    const r = await runMeasured(tracker(file));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/dense\.json: is 14\.3 MiB of JSON holding about \d+ values, more than one per 8 bytes/);
    expect(r.stderr).toContain('split it into files of fewer entries and apply each; nothing was sent');
    expect(r.peakMb).toBeLessThan(120);
    expect(sent()).toEqual([]);
  });

  it('a file of a thousand bad entries: the first 100 problems and the count of the rest, not a line each', { timeout: 120_000 }, async () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ labels: Array.from({ length: 1000 }, (_, i) => ({ name: `n${i}`, color: 'blue' })) }));
    const r = await runMeasured(tracker(file));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file}: 1000 problems:`);
    expect(r.stderr).toContain('labels[99].color:');
    expect(r.stderr).not.toContain('labels[100].color:');
    expect(r.stderr).toContain('… and 900 more');
    expect(sent()).toEqual([]);
  });
});
