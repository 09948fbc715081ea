import { readFile } from 'node:fs/promises';

/**
 * The key set a CI provider publishes (its `jwks_uri` document, saved to a file), for token exchange.
 * Refused with the file named when it cannot be read or is not a JWKS (`{"keys": [...]}`).
 */
export async function readTrustJwks(file: string): Promise<{ keys: unknown[] }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new Error(`${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new Error(`${file} is not JSON`);
  }
  const keys = (doc as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.length === 0) throw new Error(`${file} is not a JSON Web Key Set (no "keys" list)`);
  return { keys };
}
