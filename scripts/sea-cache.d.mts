// Types of scripts/sea-cache.mjs, for the tests that import it.
export const BAKED_COMMANDS: string[][];
export function bakeCodeCache(dist: string, into: string, extraEnv?: Record<string, string>): string[];
