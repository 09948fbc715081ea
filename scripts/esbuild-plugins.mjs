// esbuild plugins shared by the build (dist/) and the single executable (npm run package).

// undici's HTTP/1 client requires its HTTP/2 client, which loads node:http2 (about 10 ms of CPU for
// every command that makes a request). opsctl never sets allowH2, so no connection ever negotiates
// h2 and the HTTP/2 client is never called: it is replaced by a stub that says so if it ever were.
export const noHttp2 = {
  name: 'no-http2',
  setup(b) {
    b.onResolve({ filter: /[\\/]client-h2\.js$/ }, (args) => (/[\\/]undici[\\/]/.test(args.importer) ? { path: 'undici-client-h2', namespace: 'no-http2' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'no-http2' }, () => ({
      contents: "module.exports = function connectH2() { throw new Error('HTTP/2 is not built into opsctl (allowH2 is never set)'); };",
      loader: 'js',
    }));
  },
};

// A single executable's script cannot import() at run time (node 20 gives it no dynamic-import
// callback): every lazy `import('node:x')` of a built-in becomes a require of it. Lazy imports of
// our own modules are already turned into lazily run bundled code by esbuild.
export const builtinImportsAsRequire = {
  name: 'builtin-imports-as-require',
  setup(b) {
    b.onLoad({ filter: /\.(ts|js|mjs|cjs)$/ }, async (args) => {
      const fs = await import('node:fs/promises');
      const text = await fs.readFile(args.path, 'utf8');
      if (!/\bimport\(\s*['"]node:/.test(text)) return undefined;
      // type positions (`typeof import('node:x')`, `import('node:x').Name`) are left to the TS loader
      const call = /(?<!typeof\s*)\bimport\(\s*(['"])(node:[\w/]+)\1\s*\)(?!\s*\.(?!then\b))/g;
      const contents = text.replace(call, 'Promise.resolve().then(() => require($1$2$1))');
      const ext = args.path.slice(args.path.lastIndexOf('.') + 1);
      return { contents, loader: ext === 'ts' ? 'ts' : 'js' };
    });
  },
};
