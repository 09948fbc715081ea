#!/usr/bin/env node
// Tiny launcher: `opsctl --version` is answered here, from package.json, before any of the CLI loads
// (commander would print the same line); every other command line turns on the module compile cache
// where the runtime has one and hands over to dist/cli.js.
import { readFileSync } from 'node:fs';
import module from 'node:module';
import v8 from 'node:v8';

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
  // undici parses HTTP with a WebAssembly build of llhttp. V8 would compile it twice: quickly (Liftoff),
  // then again optimised on background threads, which costs a short-lived CLI more CPU than it ever saves.
  v8.setFlagsFromString('--liftoff-only');

  const { run } = await import('../dist/cli.js');
  await run();
}
