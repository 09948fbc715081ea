import { build } from 'esbuild';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Bundles a TypeScript snippet that imports from src/ (paths relative to the repo root, e.g.
 * `import { FileStore } from './packages/mock/src/store.ts'`) into a runnable .mjs, for tests that need the
 * code in a separate process (crashes, concurrency).
 */
export async function bundleScript(source: string): Promise<string> {
  // Inside the repo, so that the script's package imports resolve from its node_modules.
  const parent = join(ROOT, 'node_modules', '.cache', 'opsctl-test-scripts');
  mkdirSync(parent, { recursive: true });
  const dir = mkdtempSync(join(parent, 'script-'));
  const out = join(dir, 'script.mjs');
  await build({
    stdin: { contents: source, resolveDir: ROOT, loader: 'ts', sourcefile: 'script.ts' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    outfile: out,
    logLevel: 'silent',
  });
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
  return out;
}
