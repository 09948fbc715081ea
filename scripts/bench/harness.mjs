// Shared helpers for `npm run bench`: measure a node process's CPU time and peak memory via the probe.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = join(ROOT, 'bin/opsctl.cjs');
const PROBE = fileURLToPath(new URL('./probe.mjs', import.meta.url));

/**
 * Runs `node [args]` with the probe; resolves {cpuMs, maxRssKb, wallMs, code, stdout, stderr}.
 * `onStderr(textSoFar)` sees stderr as it arrives (a bench that plays the browser reads the sign-in URL there).
 */
export function measure(args, { env = {}, input, onStderr } = {}) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['--import', PROBE, ...args], {
      env: { ...process.env, NO_COLOR: '1', ...env, OPSCTL_BENCH_FD: '3' },
      stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let report = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => {
      stderr += c;
      onStderr?.(stderr);
    });
    child.stdio[3].on('data', (c) => (report += c));
    child.stdin.end(input ?? '');
    child.on('error', reject);
    child.on('close', (code) => {
      const wallMs = performance.now() - started;
      try {
        const r = JSON.parse(report.trim().split('\n').pop());
        resolve({ ...r, wallMs, code, stdout, stderr });
      } catch {
        reject(new Error(`no probe report from node ${args.join(' ')} (exit ${code}): ${stderr}`));
      }
    });
  });
}

/** Polls `check` every `pollMs` until it holds; throws naming `what` after `timeoutMs` (a condition, never a fixed sleep). */
export async function until(check, what, { timeoutMs = 120_000, pollMs = 100 } = {}) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** The bench's scratch dirs: removed when the bench ends (its config dirs, sandboxes' records, uploads), as it leaves nothing behind. */
const made = new Set();
process.on('exit', () => {
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

export function tempDir(prefix = 'opsctl-bench-') {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.add(dir);
  return dir;
}

/**
 * Runs each case `rounds` times, interleaved (a round runs every case once, in rotating order, so
 * machine noise hits all cases alike). Returns the median CPU ms and the max peak RSS of each case.
 * A case's `onStderr()` returns a fresh stderr watcher for each run.
 */
export async function interleaved(cases, rounds) {
  const samples = Object.fromEntries(cases.map((c) => [c.name, { cpu: [], rss: [] }]));
  for (let r = 0; r < rounds; r++) {
    const order = cases.map((_, i) => cases[(i + r) % cases.length]);
    for (const c of order) {
      const res = await measure(c.args, { env: c.env, onStderr: c.onStderr?.() });
      if (res.code !== 0 && !(c.ok ?? []).includes(res.code)) throw new Error(`${c.name} exited ${res.code}: ${res.stderr}`);
      samples[c.name].cpu.push(res.cpuMs);
      samples[c.name].rss.push(res.maxRssKb);
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([name, s]) => [name, { cpuMs: median(s.cpu), maxRssMb: Math.max(...s.rss) / 1024 }]));
}

/** Prints one result row and remembers whether it met its budget. */
export class Report {
  rows = [];
  row(name, value, budget, ok) {
    this.rows.push({ name, value, budget, ok });
    console.log(`${ok ? 'ok  ' : 'FAIL'}  ${name.padEnd(58)} ${String(value).padEnd(22)} budget ${budget}`);
  }
  get failed() {
    return this.rows.filter((r) => !r.ok);
  }
}
