/**
 * V8 compiles WebAssembly twice: quickly (Liftoff), then again optimised on background threads, which
 * costs a short-lived CLI more CPU than it ever saves (a tracker list against a server: 55% more
 * instructions without it). How V8 compiles is process-wide state, so the choice is the entry point's
 * (src/cli.ts run(): Liftoff only, given here with onFirstWasm); the two modules that bring WebAssembly
 * (undici's HTTP parser, jq) call beforeWasm() before they compile any. So only a command that compiles
 * some changes a V8 flag (one without either never loads node:v8, and a changed flag makes Node compile
 * each built-in module loaded afterwards from source), and a library or test that loads them without
 * the entry point leaves its process as it was.
 */
let choice: (() => void) | undefined;
let wanted = false;

/** The entry point's setting for WebAssembly, applied once, when the first module about to compile some asks for it. */
export function onFirstWasm(apply: () => void): void {
  choice = apply;
  if (wanted) applyChoice();
}

/** Called by a module that brings WebAssembly before it compiles any: the entry point's setting, if it gave one. */
export function beforeWasm(): void {
  wanted = true;
  applyChoice();
}

function applyChoice(): void {
  const apply = choice;
  choice = undefined;
  apply?.();
}
