#!/usr/bin/env node
// Tiny launcher: turn on the module compile cache where the runtime has one, then hand over to dist/cli.js.
import module from 'node:module';
import v8 from 'node:v8';

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
