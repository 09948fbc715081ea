import v8 from 'node:v8';

let set = false;

/**
 * V8 compiles WebAssembly twice: quickly (Liftoff), then again optimised on background threads, which
 * costs a short-lived CLI more CPU than it ever saves. Called by the two modules that bring
 * WebAssembly (undici's HTTP parser, jq) before they compile any, so a command without either never
 * loads node:v8.
 */
export function liftoffOnly(): void {
  if (set) return;
  v8.setFlagsFromString('--liftoff-only');
  set = true;
}
