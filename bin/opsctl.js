#!/usr/bin/env node
// Tiny launcher: `opsctl --version` is answered here, from package.json, before any of the CLI loads
// (commander would print the same line); every other command line turns on the module compile cache
// where the runtime has one and hands over to dist/cli.mjs. Built-ins come from process.getBuiltinModule:
// an `import` of one makes Node build an ES-module copy of all its exports first (a few ms for node:fs).
if (typeof process.getBuiltinModule !== 'function') {
  process.stderr.write(
    `X opsctl needs Node.js 20.18.1 or later; this is ${process.version}\n  install a newer Node.js, or use the single executable (npm run package), which carries its own\n`,
  );
  process.exit(1);
}
const { readFileSync } = process.getBuiltinModule('node:fs');
const module = process.getBuiltinModule('node:module');

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  process.stdout.write(`${JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version}\n`);
} else {
  if (typeof module.enableCompileCache === 'function' && !process.env.NODE_DISABLE_COMPILE_CACHE) {
    try {
      module.enableCompileCache();
    } catch {
      // a read-only cache directory is not a reason to fail
    }
  }
  const { run } = await import('../dist/cli.mjs');
  await run();
}
