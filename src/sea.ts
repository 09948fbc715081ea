// The entry of the single executable (`npm run package`): the whole CLI bundled as one CommonJS script
// inside a copy of node. `opsctl __kv-member …` runs a simulated kv member (the sandbox's), since a
// host without node has nothing else to run the member program with.
import v8 from 'node:v8';

// As core/wasm.ts does in dist/: compile WebAssembly (undici's llhttp, jq) once, not again on background threads.
v8.setFlagsFromString('--liftoff-only');

if (process.argv[2] === '__kv-member') {
  process.argv.splice(2, 1);
  void import('./kv/member/main.js');
} else {
  void import('./cli.js').then(({ run }) => run());
}
