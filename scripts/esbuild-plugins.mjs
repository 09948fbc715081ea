// esbuild plugins shared by the build (dist/) and the single executable (npm run package).

// undici's HTTP/1 client requires its HTTP/2 client, which loads node:http2 (about 10 ms of CPU for
// every command that makes a request). opsctl never sets allowH2, so no connection ever negotiates
// h2 and the HTTP/2 client is never called: it is replaced by a stub that says so if it ever were.
export const noHttp2 = {
  name: 'no-http2',
  setup(b) {
    b.onResolve({ filter: /[\\/]client-h2\.js$/ }, (args) =>
      /[\\/]undici[\\/]/.test(args.importer) ? { path: 'undici-client-h2', namespace: 'no-http2' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'no-http2' }, () => ({
      contents: "module.exports = function connectH2() { throw new Error('HTTP/2 is not built into opsctl (allowH2 is never set)'); };",
      loader: 'js',
    }));
  },
};

// Start-up: built-in modules that bundled dependencies load at module top level but a command
// rarely or never uses, each a few ms of CPU at every start (measured with scripts/bench.mjs):
// - `import process from 'node:process'` (chalk, env-paths, execa, open) is the global `process`
//   object, so the bundle uses that directly (as an ES module it made Node build a facade reading every
//   property, creating stdin, stdout and stderr, ~5-9 ms; dist/ is CommonJS now, where esbuild would
//   still wrap it in an interop copy of its properties);
// - commander requires node:child_process (~5 ms) only to spawn executable subcommands, which
//   opsctl does not have: it is required when commander first calls spawn;
// - chalk's supports-color loads node:tty (~5 ms) to guess a level for its default instance, which
//   opsctl never uses (IOStreams gives every Chalk its level from NO_COLOR, FORCE_COLOR and isTTY);
// - chalk sets up its styles when loaded (ansi-styles: every style's escape codes; chalk: a getter per style): 3.6 M
//   instructions in a bare script with a code cache; kv get 2.7 M and the embedded list 2.3 M fewer without it.
//   IOStreams' import of it gets a Chalk that loads chalk with the first instance made (a command that colours
//   something), as esbuild runs an ES module that is require()d when first required;
// - find-my-way (the mock's router) requires node:assert (~5 ms) for `assert(condition, message)` on
//   its route definitions: the real one is required only when a condition fails, so the error is the same.
// - the mock's services import node:crypto (~5 ms) at module top level for ids, tokens and keys that a read
//   never makes (an embedded list loads the tracker's services): it loads with the first call. Only
//   functions are forwarded, each by name, so a name missing here fails the build (no matching export).
const CRYPTO_FUNCTIONS = [
  'createHash',
  'createPrivateKey',
  'createPublicKey',
  'generateKeyPair',
  'generateKeyPairSync',
  'randomBytes',
  'randomInt',
  'randomUUID',
  'sign',
  'timingSafeEqual',
  'verify',
];

export const lazyBuiltins = {
  name: 'lazy-builtins',
  setup(b) {
    b.onResolve({ filter: /^(node:)?process$/ }, () => ({ path: 'process', namespace: 'lazy-builtins' }));
    b.onResolve({ filter: /^node:child_process$/ }, (args) =>
      /[\\/]commander[\\/]/.test(args.importer) ? { path: 'child_process', namespace: 'lazy-builtins' } : undefined,
    );
    b.onResolve({ filter: /^(node:)?assert$/ }, (args) =>
      /[\\/]find-my-way[\\/]/.test(args.importer) ? { path: 'assert', namespace: 'lazy-builtins' } : undefined,
    );
    b.onResolve({ filter: /^(node:)?crypto$/ }, (args) =>
      /[\\/]packages[\\/]mock[\\/]src[\\/]/.test(args.importer) ? { path: 'crypto', namespace: 'lazy-builtins' } : undefined,
    );
    b.onResolve({ filter: /^#supports-color$/ }, (args) =>
      /[\\/]chalk[\\/]/.test(args.importer) ? { path: 'supports-color', namespace: 'lazy-builtins' } : undefined,
    );
    b.onResolve({ filter: /^chalk$/ }, (args) =>
      /[\\/]src[\\/]core[\\/]io\.ts$/.test(args.importer) ? { path: 'chalk', namespace: 'lazy-builtins' } : undefined,
    );
    const contents = {
      process: 'module.exports = process;',
      child_process: "exports.spawn = (...args) => require('node:child_process').spawn(...args);",
      'supports-color': 'module.exports = { stdout: false, stderr: false };',
      chalk: "let chalk; export function Chalk(options) { return new (chalk ??= require('chalk')).Chalk(options); }",
      assert: "module.exports = (value, message) => { if (!value) require('node:assert')(value, message); };",
      crypto: [
        "const crypto = () => process.getBuiltinModule('node:crypto');",
        ...CRYPTO_FUNCTIONS.map((name) => `export function ${name}(...args) { return crypto().${name}(...args); }`),
        // promisify(generateKeyPair) resolves { publicKey, privateKey }, as Node's own (which marks its callback's
        // two values with an internal symbol)
        "generateKeyPair[Symbol.for('nodejs.util.promisify.custom')] = (...args) => new Promise((resolve, reject) => crypto().generateKeyPair(...args, (err, publicKey, privateKey) => (err ? reject(err) : resolve({ publicKey, privateKey }))));",
      ].join('\n'),
    };
    // (resolveDir: the chalk stub's require resolves the real chalk from here)
    b.onLoad({ filter: /.*/, namespace: 'lazy-builtins' }, (args) => ({ contents: contents[args.path], loader: 'js', resolveDir: process.cwd() }));
  },
};
