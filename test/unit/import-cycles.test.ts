import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCircular, type Dependency, type DependencyTree } from 'dpdm';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The runtime import cycles among the TypeScript files under `dir`: what `npx dpdm -T src/cli.ts`
 * reports, found in well under a second. esbuild reads the import graph the way the build bundles it
 * (static and dynamic imports; imports used only as types are dropped, as -T does); dpdm's own
 * parseCircular finds the cycles in it. Every file is an entry, so files cli.ts never reaches count too.
 */
async function importCycles(dir: string, under: readonly string[] = ['.']): Promise<{ files: string[]; cycles: string[][] }> {
  const entries = under.flatMap((sub) =>
    readdirSync(join(dir, sub), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .map((f) => join(dir, sub, f)),
  );
  const { metafile } = await build({
    entryPoints: entries,
    absWorkingDir: dir,
    bundle: true,
    write: false,
    metafile: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    splitting: true,
    outdir: join(dir, '.cycles-out'),
    logLevel: 'silent',
  });
  const tree: DependencyTree = {};
  for (const [file, input] of Object.entries(metafile.inputs)) {
    tree[file] = input.imports
      .filter((i) => !i.external)
      .map((i): Dependency => ({
        issuer: file,
        request: i.original ?? i.path,
        kind: (i.kind === 'dynamic-import' ? 'DynamicImport' : 'StaticImport') as Dependency['kind'],
        id: i.path,
      }));
  }
  const rel = (f: string) => relative(dir, join(dir, f));
  return { files: Object.keys(tree).map(rel), cycles: parseCircular(tree).map((cycle) => cycle.map(rel)) };
}

describe('no runtime import cycles (imports point down the floors: cli → program → commands → domain/mock → core)', () => {
  it('src/ and the workspace packages (packages/mock, packages/shared) have none', async () => {
    const { files, cycles } = await importCycles(ROOT, ['src', 'packages']);
    // the whole tree was read, entry point and the deepest rooms alike
    expect(files).toContain('src/cli.ts');
    expect(files).toContain('packages/mock/src/services/tracker/epics.ts');
    expect(files.length).toBeGreaterThan(200);
    expect(files).toContain('packages/etcd-sim/src/member.ts');
    expect(files).toContain('packages/shared/src/errors.ts');
    expect(cycles.map((c) => c.join(' -> '))).toEqual([]);
  });

  it('the check finds a cycle through a static or a dynamic import, and ignores type-only imports', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'opsctl-cycles-'));
    try {
      writeFileSync(join(dir, 'a.ts'), "import { b } from './b.js';\nexport const a = () => b;\n");
      writeFileSync(join(dir, 'b.ts'), "export const b = 1;\nexport async function later() { return (await import('./a.js')).a; }\n");
      writeFileSync(join(dir, 'c.ts'), "import type { D } from './d.js';\nexport type C = D;\nexport const c = 1;\n");
      writeFileSync(join(dir, 'd.ts'), "import { c } from './c.js';\nexport type D = number;\nexport const d = c;\n");
      const { cycles } = await importCycles(dir);
      expect(cycles.map((c) => [...c].sort())).toEqual([['a.ts', 'b.ts']]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
