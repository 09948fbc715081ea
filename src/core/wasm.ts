import v8 from 'node:v8';

let set = false;

/**
 * V8 compiles WebAssembly twice: quickly (Liftoff), then again optimised on background threads, which
 * costs a short-lived CLI more CPU than it ever saves (a tracker list against a server: 55% more
 * instructions without it). Called by the two modules that bring WebAssembly (undici's HTTP parser, jq)
 * before they compile any, so a command without either never loads node:v8 nor changes a V8 flag (a
 * changed flag makes Node compile each built-in module loaded afterwards from source).
 */
export function liftoffOnly(): void {
  if (set) return;
  // the code bin/load.cjs compiled so far is cached now, with the flags it was compiled under
  const flush = (globalThis as Record<symbol, unknown>)[Symbol.for('opsctl.code-cache.flush')];
  if (typeof flush === 'function') (flush as () => void)();
  v8.setFlagsFromString('--liftoff-only');
  set = true;
  // bin/load.cjs keeps the code it compiles from now on in a cache of its own (V8 keys cached code by its flags)
  (globalThis as Record<symbol, unknown>)[Symbol.for('opsctl.v8.liftoff-only')] = true;
}
