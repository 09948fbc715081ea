#!/usr/bin/env node
// Tiny launcher: turn on the module compile cache where the runtime has one, then hand over to dist/cli.js.
import module from 'node:module';

if (typeof module.enableCompileCache === 'function' && !process.env.NODE_DISABLE_COMPILE_CACHE) {
  try {
    module.enableCompileCache();
  } catch {
    // a read-only cache directory is not a reason to fail
  }
}

const { run } = await import('../dist/cli.js');
await run();
