// Types of scripts/sea-blob.mjs, for the tests that import it.
export function seaBlob(dist: string, out: string, extraEnv?: Record<string, string>): Promise<string>;
