// Bundles src/ into dist/ with esbuild: ESM, code splitting, so each verb is its own lazily loaded chunk.
import { build } from 'esbuild';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { lazyBuiltins, noHttp2 } from './esbuild-plugins.mjs';

// Extra entry points are separate programs (the simulated kv member runs as its own process).
const entries = { cli: 'src/cli.ts', 'kv-member': 'src/kv/member/main.ts' };

// CommonJS dependencies inside ESM chunks expect these (dropped again below from chunks that do not).
const BANNER = [
  "import { createRequire as __opsCreateRequire } from 'node:module';",
  "import { fileURLToPath as __opsFileURLToPath } from 'node:url';",
  "import { dirname as __opsDirname } from 'node:path';",
  'const require = __opsCreateRequire(import.meta.url);',
  'const __filename = __opsFileURLToPath(import.meta.url);',
  'const __dirname = __opsDirname(__filename);',
].join(' ');

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
await build({
  entryPoints: Object.fromEntries(Object.entries(entries).filter(([, file]) => existsSync(file))),
  outdir: 'dist',
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
  for (const name of readdirSync(dir).filter((f) => f.endsWith('.js'))) {
    const file = `${dir}/${name}`;
    const text = readFileSync(file, 'utf8');
    if (!text.startsWith(BANNER)) throw new Error(`${file}: the build's banner is not its first line`);
    const body = text.slice(BANNER.length);
    if (!uses.test(body)) writeFileSync(file, body);
  }
}
