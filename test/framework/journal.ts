import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The upgrade journal under a config dir (the tests drive one cluster per dir), or undefined when there
 * is none yet or it is being replaced (read mid-rename).
 */
export function readJournal(configDir: string): any {
  const dir = join(configDir, 'data', 'kv', 'journals');
  const f = existsSync(dir) ? readdirSync(dir).find((x) => x.endsWith('.json')) : undefined;
  try {
    return f ? JSON.parse(readFileSync(join(dir, f), 'utf8')) : undefined;
  } catch {
    return undefined;
  }
}
