// Build step (scripts/build.mjs bundles this with esbuild and runs it with its stdout a pipe): the help text
// of every command, as main() prints it for `opsctl <words> --help`, rendered once at build time so that
// bin/opsctl.cjs can print it without loading commander or building the command tree (issue 60: help
// within 1.1x of `node -e 0`; commander alone rendering the top-level help costs 1.17x).
// Two renderings per command: `n` at 80 columns (a pipe or file, or a terminal 80 wide: commander wraps at
// 80 when stdout is no terminal) and `w` unwrapped, with `m` its longest line: a terminal at least that wide
// shows the same text. A terminal of another width gets commander as before (bin/opsctl.cjs).
// Written as JSON to the file named by argv[2]: { "<words>": { n, w, m } } ("" is the top level).
import { PassThrough } from 'node:stream';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../src/cli.ts';
import { IOStreams } from '../src/core/io.ts';
import { buildProgram } from '../src/program.ts';
import { createContext } from '../src/wiring/context.ts';

const out = process.argv[2];
// nothing of the build machine's own configuration may reach a help text: an empty home and config
const home = mkdtempSync(join(tmpdir(), 'opsctl-help-'));
const env = { PATH: process.env.PATH, HOME: home, OPSCTL_CONFIG_DIR: join(home, 'config'), XDG_CACHE_HOME: join(home, 'cache'), NO_COLOR: '1' };

/** Every visible command's words under `cmd`. */
function paths(cmd, prefix = []) {
  return cmd.commands
    .filter((c) => !c._hidden)
    .flatMap((c) => {
      const words = [...prefix, c.name()];
      return [words, ...paths(c, words)];
    });
}

async function render(words) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const chunks = [];
  stdout.on('data', (c) => chunks.push(c));
  const stdin = new PassThrough();
  stdin.end('');
  const io = new IOStreams({ stdin, stdout, stderr, env, stdinTTY: false, stdoutTTY: false, stderrTTY: false });
  const code = await main([...words, '--help'], { env, io });
  if (code !== 0) throw new Error(`opsctl ${words.join(' ')} --help exited ${code}`);
  return Buffer.concat(chunks).toString('utf8');
}

/** commander reads the help width from process.stdout (a pipe here: 80); `columns` makes it a terminal that wide. */
function width(columns) {
  Object.defineProperty(process.stdout, 'isTTY', { value: columns !== undefined, configurable: true });
  Object.defineProperty(process.stdout, 'columns', { value: columns, configurable: true });
}

// (bundled as CommonJS for the build: no top-level await)
void (async () => {
  try {
    const ctx = createContext({ env, io: new IOStreams({ env, stdoutTTY: false, stderrTTY: false, stdinTTY: false }) });
    const all = [[], ...paths(await buildProgram(ctx))];
    const texts = {};
    for (const words of all) {
      width(undefined);
      const n = await render(words);
      width(100_000);
      const w = await render(words);
      texts[words.join(' ')] = { n, w, m: Math.max(...w.split('\n').map((l) => l.length)) };
    }
    width(undefined);
    writeFileSync(out, JSON.stringify(texts));
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
})().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exitCode = 1;
});
