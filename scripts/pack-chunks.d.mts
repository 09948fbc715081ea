// Types of scripts/pack-chunks.mjs, for the tests that import it.
export const GUEST_MAX: number;
export function packChunks(
  meta: { outputs: Record<string, { imports: { path: string; kind: string; external?: boolean }[] }> },
  esm: string,
  stage: string,
  entries: string[],
): Record<string, string[]>;
/** Writes each of `files` (of `stage`) as the function bin/load.cjs compiles a chunk as; their source maps one line down. */
export function wrapChunks(stage: string, files: string[]): void;
/** Makes each of `files` (of `stage`) export the object its esbuild `__export` made, not a copy of it. */
export function exportsInPlace(stage: string, files: string[]): void;
