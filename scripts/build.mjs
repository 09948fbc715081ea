// Bundles src/ into dist/ with esbuild, in two steps:
// 1. ESM with code splitting (esbuild splits only ES modules), so each verb is its own lazily loaded
//    chunk, into a temporary directory;
// 2. each chunk turned into CommonJS (imports become requires, `import()` a lazy require, live bindings
//    kept as getters), with source maps that still point into src/.
// CommonJS because bin/load.cjs gives the chunks a V8 code cache on every Node (Node 20 can cache only
// scripts, not ES modules), and because a CommonJS program does not start Node's ES-module loader.
//
// Atomic: the new build is written to .dist-build-<pid>-* beside dist/ and renamed into place whole, so an
// opsctl started from this checkout meanwhile runs the old build or the new one, never a half-written
// dist/ (scripts/swap-dir.mjs; bin/opsctl.cjs waits out the swap's instant, bin/load.cjs finds the
// chunks of the build it started on in the .dist-old-* kept beside it).
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { lazyBuiltins, noHttp2 } from './esbuild-plugins.mjs';
import { exportsInPlace, packChunks, wrapChunks } from './pack-chunks.mjs';
import { swapInto } from './swap-dir.mjs';

// The workspace packages (@opsctl/mock, @opsctl/shared, @opsctl/etcd-sim) are bundled from their sources like src/: esbuild
// resolves their names through tsconfig.json's `paths`, so no node_modules link is needed to build.
// Extra entry points are separate programs (the simulated kv member runs as its own process).
const entries = { cli: 'src/cli.ts', 'kv-member': 'packages/etcd-sim/src/member.ts' };
const esm = mkdtempSync(join(tmpdir(), 'opsctl-build-'));
// beside dist/ (the same file system), so the finished build is renamed into place, not copied
const stage = mkdtempSync(`.dist-build-${process.pid}-`);

try {
  const { metafile } = await build({
    entryPoints: Object.fromEntries(Object.entries(entries).filter(([, file]) => existsSync(file))),
    outdir: esm,
    // already the final names, so step 2 keeps every import's path as it is
    outExtension: { '.js': '.cjs' },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Dependencies are bundled too: one file read per chunk instead of hundreds of module resolutions at start-up.
    // jq-wasm comes in through its `inline` entry (the WebAssembly inside the module), so --jq works from
    // dist/, the npm tarball and the single executable alike; that chunk loads only with --jq.
    // @napi-rs/keyring loads a prebuilt native addon per platform: it stays a runtime dependency.
    external: ['playwright-core', 'fsevents', '@napi-rs/keyring'],
    minifyWhitespace: true,
    minifySyntax: true,
    sourcemap: 'linked',
    chunkNames: 'chunks/[name]-[hash]',
    logLevel: 'warning',
    metafile: true, // the chunks' import graph, for packChunks
    plugins: [noHttp2, lazyBuiltins],
    define: { __OPSCTL_VERSION__: JSON.stringify(JSON.parse(readFileSync('package.json', 'utf8')).version) },
  });

  const files = ['', 'chunks/'].flatMap((dir) =>
    readdirSync(join(esm, dir))
      .filter((f) => f.endsWith('.cjs'))
      .map((f) => dir + f),
  );
  await build({
    entryPoints: files.map((f) => join(esm, f)),
    outbase: esm,
    outdir: stage,
    outExtension: { '.js': '.cjs' },
    bundle: false,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    // `import()` becomes a lazy require: a chunk is compiled as a script (vm.Script), which has no import()
    supported: { 'dynamic-import': false },
    // src/kv/sandbox/members.ts finds dist/kv-member.cjs beside the chunks. `open` looks for its own copy
    // of xdg-open beside its package file, which a bundle does not have: with no URL it uses the system's.
    define: { 'import.meta.dirname': '__dirname', 'import.meta.url': 'undefined' },
    minifyWhitespace: true,
    sourcemap: 'linked', // esbuild reads step 1's maps, so these still name src/ and node_modules/
    logLevel: 'warning',
  });
  // module.exports as __export made it (scripts/pack-chunks.mjs exportsInPlace)
  exportsInPlace(stage, files);
  // the chunks always loaded together read from one file (scripts/pack-chunks.mjs)
  const programs = Object.entries(entries)
    .filter(([, file]) => existsSync(file))
    .map(([name]) => `${name}.cjs`);
  packChunks(metafile, esm, stage, programs);
  const out = ['', 'chunks/'].flatMap((dir) =>
    readdirSync(join(stage, dir))
      .filter((f) => f.endsWith('.cjs'))
      .map((f) => join(dir, f)),
  );
  // the CLI's chunks as bin/load.cjs compiles them, already wrapped; the simulated member is a program node runs, so it
  // and every chunk its own require() reaches stay as they are
  const byNode = requiredFrom(stage, 'kv-member.cjs');
  wrapChunks(
    stage,
    out.filter((f) => !byNode.has(f)),
  );
  await helpTexts(stage);
  const hash = createHash('sha256');
  for (const file of out.sort()) {
    const text = readFileSync(join(stage, file), 'utf8');
    // a script has no import() and no import.meta: step 2 must have rewritten every one
    const left = /(?<![\w$.])import(?:\(|\.meta\b)/.exec(text.replace(/"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`/g, '""'));
    if (left) throw new Error(`dist/${file}: ${left[0]} is left in a CommonJS chunk`);
    // the names as they will be in dist/, so the id is the same whichever directory built it
    hash.update(join('dist', file)).update('\0').update(text).update('\0');
  }
  // (the help texts too: bin/opsctl.cjs prints them, and a build that changes only them is another build)
  for (const file of readdirSync(join(stage, 'help')).sort())
    hash
      .update(join('dist', 'help', file))
      .update('\0')
      .update(readFileSync(join(stage, 'help', file)));
  // bin/load.cjs keys its code cache by this: a rebuilt dist/ never meets the cache of another build
  writeFileSync(join(stage, 'build-id'), `${hash.digest('hex').slice(0, 16)}\n`);
  // mkdtemp makes it 0700: dist/ is read by every user of the checkout (and the npm package), as a made directory is
  chmodSync(stage, 0o777 & ~process.umask());
  swapInto(stage, 'dist', '.dist-old-');
} finally {
  rmSync(esm, { recursive: true, force: true });
  rmSync(stage, { recursive: true, force: true });
}

/**
 * dist/help/<noun>[.<word>].json (and _.json for the top level): every command's --help as main() prints it, rendered
 * here once (scripts/help-texts.mjs, bundled from src/ like the CLI and run with its stdout a pipe), so
 * bin/opsctl.cjs prints a command's help without loading commander or building the tree.
 */
async function helpTexts(stage) {
  const dir = mkdtempSync(join(tmpdir(), 'opsctl-help-build-'));
  try {
    await build({
      entryPoints: ['scripts/help-texts.mjs'],
      outfile: join(dir, 'help-texts.cjs'),
      bundle: true,
      format: 'cjs',
      platform: 'node',
      target: 'node20',
      external: ['playwright-core', 'fsevents', '@napi-rs/keyring'],
      logLevel: 'warning',
      plugins: [noHttp2],
      define: {
        __OPSCTL_VERSION__: JSON.stringify(JSON.parse(readFileSync('package.json', 'utf8')).version),
        'import.meta.dirname': '__dirname',
        'import.meta.url': 'undefined',
      },
    });
    execFileSync(process.execPath, [join(dir, 'help-texts.cjs'), join(dir, 'help.json')], { stdio: ['ignore', 'pipe', 'inherit'] });
    const texts = JSON.parse(readFileSync(join(dir, 'help.json'), 'utf8'));
    const byNoun = {};
    // a file per command two words deep with the commands under it (`tracker stories`: its verbs' help too),
    // so a help reads and parses a few KB
    for (const [words, text] of Object.entries(texts)) (byNoun[words.split(' ').slice(0, 2).join('.') || '_'] ??= {})[words] = text;
    mkdirSync(join(stage, 'help'));
    for (const [noun, entries] of Object.entries(byNoun)) writeFileSync(join(stage, 'help', `${noun}.json`), JSON.stringify(entries));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `entry` (a file of `stage`) and every chunk file its require() calls reach, as paths relative to `stage`. */
function requiredFrom(stage, entry) {
  const seen = new Set();
  const todo = existsSync(join(stage, entry)) ? [entry] : [];
  while (todo.length > 0) {
    const file = todo.pop();
    if (seen.has(file)) continue;
    seen.add(file);
    const dir = dirname(file);
    for (const [, rel] of readFileSync(join(stage, file), 'utf8').matchAll(/require\("(\.\.?\/[^"]+\.cjs)"\)/g)) todo.push(join(dir, rel));
  }
  return seen;
}
