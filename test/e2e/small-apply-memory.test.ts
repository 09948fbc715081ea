import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/bin.js';
import { startMock, trackerEnv } from '../helpers/mock.js';

/**
 * Issue 27, item 10f, through the built binary: a 15 MB apply file (under the 16 MiB cap) either applies
 * or is refused with a clear message, with the peak memory of the process bounded (VmHWM from /proc,
 * read until it exits), never by wall time. JSON of that size is planned; YAML over 1 MiB is refused
 * before the yaml library's document model (about 70 times a file's size) is built.
 */
let mock: Awaited<ReturnType<typeof startMock>>;
let dir: string;
let env: NodeJS.ProcessEnv;
const MB = 1024 * 1024;

/** Runs the built binary and follows its peak resident memory (VmHWM, which only grows) in /proc until it exits. */
async function runMeasured(args: string[]) {
  const child = execa(process.execPath, [BIN, ...args], { reject: false, env: { NO_COLOR: '1', ...env }, extendEnv: true });
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
  return { code: r.exitCode, stdout: String(r.stdout), stderr: String(r.stderr), peakMb: peakKb / 1024 };
}

beforeAll(async () => {
  mock = await startMock({ services: ['tracker'] });
  dir = mkdtempSync(join(tmpdir(), 'opsctl-small-apply-mem-'));
  env = trackerEnv(mock, join(dir, 'config'));
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

describe('a 15 MB apply file: bounded memory', () => {
  it('JSON: planned (dry run) with peak memory under 20 times the file', { timeout: 300_000 }, async () => {
    const file = join(dir, 'labels.json');
    writeFileSync(file, JSON.stringify({ labels: Array.from({ length: 131_000 }, (_, i) => label(i)) }));
    const size = statSync(file).size;
    expect(size).toBeGreaterThan(15 * MB);
    expect(size).toBeLessThan(16 * MB);
    const r = await runMeasured(['tracker', 'labels', 'apply', '-f', file, '--dry-run']);
    expect(r.code, r.stderr.slice(-500)).toBe(0);
    expect(r.stderr).toContain('dry run: 131000 writes planned, none made');
    // measured: 284 MB for 15.7 MB with node's own ~50 MB (the live heap fits --max-old-space-size=150); before, the same
    expect(r.peakMb).toBeGreaterThan(0);
    expect(r.peakMb).toBeLessThan((20 * size) / MB);
    expect(mock.requests.filter((q) => q.method !== 'GET')).toEqual([]);
  });

  it('YAML over 1 MiB: refused at once with the size, the limit and the way out (JSON), tracker and labels', { timeout: 120_000 }, async () => {
    const file = join(dir, 'labels.yaml');
    const lines = ['labels:'];
    for (let i = 0; i < 120_000; i++) {
      const l = label(i);
      lines.push(`  - name: ${l.name}`, `    description: "${l.description}"`, `    color: "${l.color}"`);
    }
    writeFileSync(file, `${lines.join('\n')}\n`);
    expect(statSync(file).size).toBeGreaterThan(14 * MB);
    for (const args of [
      ['tracker', 'labels', 'apply', '-f', file, '--dry-run'],
      ['labels', 'apply', '-f', file, '--dry-run'],
    ]) {
      const r = await runMeasured(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/is 1[45]\.\d MiB of YAML: YAML files are read up to 1 MiB/);
      expect(r.stderr).toContain('write a larger file as JSON');
      // the text is read (16 MiB cap), the document model never built: before, 2 GB
      expect(r.peakMb).toBeLessThan(200);
    }
  });
});
