import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Every .ts file under `dir` (its absolute path when `dir` is), subdirectories included: what the source-reading tests walk. */
export function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}
