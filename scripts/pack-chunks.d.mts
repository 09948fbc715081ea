// Types of scripts/pack-chunks.mjs, for the tests that import it.
export const GUEST_MAX: number;
export function packChunks(
  meta: { outputs: Record<string, { imports: { path: string; kind: string; external?: boolean }[] }> },
  esm: string,
  stage: string,
  entries: string[],
): Record<string, string[]>;
