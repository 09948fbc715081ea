// Bundles src/ into dist/ with esbuild: ESM, code splitting, so each verb is its own lazily loaded chunk.
import { build } from 'esbuild';
import { existsSync, readFileSync, rmSync } from 'node:fs';

// Extra entry points are separate programs (the simulated kv member runs as its own process).
const entries = { cli: 'src/cli.ts', 'kv-member': 'src/kv/member/main.ts' };

// undici's HTTP/1 client requires its HTTP/2 client, which loads node:http2 (about 10 ms of CPU for
// every command that makes a request). opsctl never sets allowH2, so no connection ever negotiates
// h2 and the HTTP/2 client is never called: it is replaced by a stub that says so if it ever were.
const noHttp2 = {
  name: 'no-http2',
  setup(b) {
    b.onResolve({ filter: /[\\/]client-h2\.js$/ }, (args) => (/[\\/]undici[\\/]/.test(args.importer) ? { path: 'undici-client-h2', namespace: 'no-http2' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'no-http2' }, () => ({
      contents: "module.exports = function connectH2() { throw new Error('HTTP/2 is not built into opsctl (allowH2 is never set)'); };",
      loader: 'js',
    }));
  },
};

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
  // @napi-rs/keyring loads a prebuilt native addon per platform: it stays a runtime import from node_modules.
  external: ['playwright-core', 'fsevents', '@napi-rs/keyring'],
  minifyWhitespace: true,
  minifySyntax: true,
  // CommonJS dependencies inside ESM chunks expect these.
  banner: {
    js: [
      "import { createRequire as __opsCreateRequire } from 'node:module';",
      "import { fileURLToPath as __opsFileURLToPath } from 'node:url';",
      "import { dirname as __opsDirname } from 'node:path';",
      'const require = __opsCreateRequire(import.meta.url);',
      'const __filename = __opsFileURLToPath(import.meta.url);',
      'const __dirname = __opsDirname(__filename);',
    ].join(' '),
  },
  sourcemap: 'linked',
  chunkNames: 'chunks/[name]-[hash]',
  logLevel: 'warning',
  plugins: [noHttp2],
  define: { __OPSCTL_VERSION__: JSON.stringify(JSON.parse(readFileSync('package.json', 'utf8')).version) },
});
