// `node scripts/profile-startup.mjs [-n RUNS] -- ARGS...`: where a command's start-up CPU goes. Runs
// `node --cpu-prof bin/opsctl.cjs ARGS` RUNS times (default 10; sampling every 200 us) and prints, averaged
// over the runs, the time under each original source file (dist/'s source maps map chunks back to src/,
// packages/ and node_modules/; Node's built-ins by name): inclusive (any frame of that file on the stack)
// and self. The profiler itself slows a run by about half: read the figures as shares of the run.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const at = process.argv.indexOf('--');
if (at < 0) throw new Error('usage: node scripts/profile-startup.mjs [-n RUNS] -- ARGS...');
const nAt = process.argv.indexOf('-n');
const runs = nAt > 0 && nAt < at ? Number(process.argv[nAt + 1]) : 10;
const args = process.argv.slice(at + 1);
const dir = mkdtempSync(join(tmpdir(), 'opsctl-prof-'));
try {
  for (let i = 0; i < runs; i++)
    spawnSync(process.execPath, ['--cpu-prof', '--cpu-prof-interval', '200', '--cpu-prof-dir', dir, 'bin/opsctl.cjs', ...args], { stdio: 'ignore' });
  const maps = new Map();
  const map = (url) => {
    if (!maps.has(url)) {
      const file = `${url.replace(/^file:\/\//, '')}.map`;
      maps.set(url, existsSync(file) ? new SourceMap(JSON.parse(readFileSync(file, 'utf8'))) : null);
    }
    return maps.get(url);
  };
  const source = (frame) => {
    const m = frame.url && map(frame.url);
    const original = m ? m.findEntry(frame.lineNumber, frame.columnNumber)?.originalSource : undefined;
    return (original ?? (frame.url || `(${frame.functionName})`)).replace(/^.*?(node_modules\/|src\/|packages\/|bin\/)/, '$1');
  };
  const self = new Map();
  const inclusive = new Map();
  const add = (m, k, t) => m.set(k, (m.get(k) ?? 0) + t);
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  let total = 0;
  for (const f of files) {
    const p = JSON.parse(readFileSync(join(dir, f), 'utf8'));
    const byId = new Map(p.nodes.map((n) => [n.id, n]));
    const parent = new Map();
    for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n);
    for (let i = 0; i < p.samples.length; i++) {
      let node = byId.get(p.samples[i]);
      const t = (p.timeDeltas[i] ?? 0) / files.length / 1000;
      if (node.callFrame.functionName === '(idle)') continue;
      total += t;
      add(self, source(node.callFrame), t);
      const seen = new Set();
      for (; node; node = parent.get(node.id)) {
        const s = source(node.callFrame);
        if (!seen.has(s)) (add(inclusive, s, t), seen.add(s));
      }
    }
  }
  const top = (m, n) =>
    [...m]
      .filter(([k]) => k !== '((root))')
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, v]) => `${v.toFixed(1).padStart(7)} ms ${((100 * v) / total).toFixed(0).padStart(3)}%  ${k}`)
      .join('\n');
  console.log(`opsctl ${args.join(' ')}: ${files.length} profiles, ${total.toFixed(1)} ms of samples each (profiled)`);
  console.log(`-- inclusive, by source file\n${top(inclusive, 30)}\n-- self, by source file\n${top(self, 15)}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
