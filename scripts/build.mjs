// Bundles src/ into dist/ with esbuild: ESM, code splitting, so each verb is its own lazily loaded chunk.
import { build } from 'esbuild';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { lazyBuiltins, noHttp2 } from './esbuild-plugins.mjs';

// Extra entry points are separate programs (the simulated kv member runs as its own process).
const entries = { cli: 'src/cli.ts', 'kv-member': 'src/kv/member/main.ts' };

// CommonJS dependencies inside ESM chunks expect these (dropped again below from chunks that do not).
// process.getBuiltinModule, not `import`: an imported built-in gets an ES-module copy of its exports built first.
const BANNER = [
  "const require = process.getBuiltinModule('node:module').createRequire(import.meta.url);",
  "const __filename = process.getBuiltinModule('node:url').fileURLToPath(import.meta.url);",
  "const __dirname = process.getBuiltinModule('node:path').dirname(__filename);",
].join(' ');

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
await build({
  entryPoints: Object.fromEntries(Object.entries(entries).filter(([, file]) => existsSync(file))),
  outdir: 'dist',
  // .mjs: Node knows an ES module by its name, without looking for the package.json that says so (per chunk)
  outExtension: { '.js': '.mjs' },
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
  banner: { js: BANNER },
  sourcemap: 'linked',
  chunkNames: 'chunks/[name]-[hash]',
  logLevel: 'warning',
  plugins: [noHttp2, lazyBuiltins],
  define: { __OPSCTL_VERSION__: JSON.stringify(JSON.parse(readFileSync('package.json', 'utf8')).version) },
});

// Start-up: a chunk whose code names none of require, __filename and __dirname does not need the
// banner (a createRequire per chunk loaded, ~40 for a list). The line stays, empty, so the source
// maps still line up. A name inside a string keeps the banner: the safe direction.
const uses = /(?<![\w$.])(require|__filename|__dirname)(?![\w$])/;
for (const dir of ['dist', 'dist/chunks']) {
  for (const name of readdirSync(dir).filter((f) => f.endsWith('.mjs'))) {
    const file = `${dir}/${name}`;
    const text = readFileSync(file, 'utf8');
    if (!text.startsWith(BANNER)) throw new Error(`${file}: the build's banner is not its first line`);
    const body = builtinsAsConsts(text.slice(BANNER.length), file);
    writeFileSync(file, uses.test(body) ? BANNER + body : body);
  }
}

/**
 * Start-up: esbuild writes a built-in as `import{a,b as c}from"node:x"`, and Node builds an ES-module
 * copy of all of node:x's exports for it (node:fs, node:crypto: ~100 each). Rewritten to
 * `const{a,b:c}=process.getBuiltinModule("node:x")`: the same bindings, from the module object itself.
 * Imports are hoisted, so the constants go first in the chunk (esbuild's names are unique per chunk).
 */
function builtinsAsConsts(code, file) {
  const statement = /(?<=^|[;\n}])import(?:\s*(\*\s*as\s+[\w$]+|[\w$]+)?\s*,?\s*(\{[^}]*\})?\s*from\s*)?"(node:[\w/]+)";?/g;
  const hoisted = [];
  const rest = code.replace(statement, (all, whole, named, id) => {
    const get = `process.getBuiltinModule(${JSON.stringify(id)})`;
    if (named && /\bdefault\b/.test(named)) throw new Error(`${file}: cannot rewrite ${all}`);
    if (whole) hoisted.push(`const ${whole.replace(/^\*\s*as\s+/, '')}=${get};`);
    if (named) hoisted.push(`const${named.replace(/([\w$]+)\s+as\s+([\w$]+)/g, '$1:$2')}=${get};`);
    if (!whole && !named) hoisted.push(`${get};`);
    return '';
  });
  // after the banner's line (kept empty or not), so the source map's lines stay where they were
  return hoisted.length ? rest.replace(/^\n?/, (nl) => `${hoisted.join('')}${nl}`) : rest;
}
