import { readFileSync } from 'node:fs';

/**
 * credentials.json as stored, with each profile's active account also reachable as `.oauth` (not
 * enumerable: writing the object back writes only the stored shape). Changing `.oauth` changes that
 * account's record.
 */
export function readCredentials(file: string): any {
  const all = JSON.parse(readFileSync(file, 'utf8')) as Record<string, { accounts?: Array<{ account: string }>; active?: string }>;
  for (const pc of Object.values(all)) {
    const active = (pc.accounts ?? []).find((a) => a.account === pc.active);
    Object.defineProperty(pc, 'oauth', { value: active, enumerable: false, configurable: true, writable: true });
  }
  return all;
}
