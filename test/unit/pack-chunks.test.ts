import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { transformSync } from 'esbuild';
import { exportsInPlace, GUEST_MAX, packChunks, wrapChunks } from '../../scripts/pack-chunks.mjs';

const { createLoader } = createRequire(import.meta.url)('../../bin/load.cjs') as {
  createLoader: (dist: string, env: NodeJS.ProcessEnv) => { load: (file: string) => Record<string, unknown>; stats: { compiled: number } };
};

/**
 * scripts/pack-chunks.mjs on a made-up build: cli.cjs needs base.cjs and import()s a.cjs and b.cjs, which
 * both need shared.cjs; b.cjs also needs big.cjs (larger than GUEST_MAX). Then bin/load.cjs runs it.
 */
describe('pack-chunks: a file per lazily loaded part', () => {
  const build = (): { dist: string; hosts: Record<string, string[]> } => {
    const dist = mkdtempSync(join(tmpdir(), 'opsctl-pack-'));
    mkdirSync(join(dist, 'chunks'));
    const files: Record<string, string> = {
      'cli.cjs': 'exports.base=require("./chunks/base.cjs").id;exports.a=()=>require("./chunks/a.cjs");exports.b=()=>require("./chunks/b.cjs");',
      'chunks/base.cjs': 'exports.id={base:true};',
      'chunks/a.cjs': 'exports.shared=require("./shared.cjs").id;exports.base=require("./base.cjs").id;',
      'chunks/b.cjs': 'exports.shared=require("./shared.cjs").id;exports.big=require("./big.cjs").size;',
      'chunks/shared.cjs': 'exports.id={shared:true};',
      'chunks/big.cjs': `exports.size=${GUEST_MAX + 1};//${'x'.repeat(GUEST_MAX)}`,
    };
    const edges: Record<string, [string, string][]> = {
      'cli.cjs': [
        ['chunks/base.cjs', 'import-statement'],
        ['chunks/a.cjs', 'dynamic-import'],
        ['chunks/b.cjs', 'dynamic-import'],
      ],
      'chunks/a.cjs': [
        ['chunks/shared.cjs', 'import-statement'],
        ['chunks/base.cjs', 'import-statement'],
      ],
      'chunks/b.cjs': [
        ['chunks/shared.cjs', 'import-statement'],
        ['chunks/big.cjs', 'import-statement'],
        ['node:fs', 'import-statement'],
      ],
    };
    const outputs: Record<string, { imports: { path: string; kind: string; external?: boolean }[] }> = {};
    for (const [name, code] of Object.entries(files)) {
      writeFileSync(join(dist, name), `${code}\n//# sourceMappingURL=${name.split('/').pop()}.map\n`);
      writeFileSync(join(dist, `${name}.map`), JSON.stringify({ version: 3, sources: [name], mappings: 'AAAA' }));
      outputs[join(dist, name)] = {
        imports: (edges[name] ?? []).map(([to, kind]) => (to.startsWith('node:') ? { path: to, kind, external: true } : { path: join(dist, to), kind })),
      };
    }
    return { dist, hosts: packChunks({ outputs }, dist, dist, ['cli.cjs']) };
  };

  it('copies a chunk into each part that needs it unless a part always loaded before needs it too; a chunk over GUEST_MAX keeps its file', () => {
    const { dist, hosts } = build();
    try {
      expect(hosts).toEqual({ 'cli.cjs': ['chunks/base.cjs'], 'chunks/a.cjs': ['chunks/shared.cjs'], 'chunks/b.cjs': ['chunks/shared.cjs'] });
      // a host's source map gains the one line its first line adds
      expect(JSON.parse(readFileSync(join(dist, 'chunks/a.cjs.map'), 'utf8')).mappings).toBe(';AAAA');
    } finally {
      rmSync(dist, { recursive: true, force: true });
    }
  });

  it('the loader runs each chunk once under its own path, from the first copy: the two parts share one shared.cjs; files read: cli, a, b, big', () => {
    const { dist } = build();
    try {
      const loader = createLoader(dist, { NODE_DISABLE_COMPILE_CACHE: '1' });
      const cli = loader.load(join(dist, 'cli.cjs')) as { base: object; a: () => { shared: object; base: object }; b: () => { shared: object; big: number } };
      const [a, b] = [cli.a(), cli.b()];
      expect(a.shared).toEqual({ shared: true });
      expect(b.shared).toBe(a.shared);
      expect(a.base).toBe(cli.base);
      expect(b.big).toBe(GUEST_MAX + 1);
      expect(loader.stats.compiled).toBe(4);
    } finally {
      rmSync(dist, { recursive: true, force: true });
    }
  });

  it('wrapChunks writes each chunk as the function the loader compiles (its head a line of its own, the map one line down); the loader runs it as the unwrapped file, a file it did not wrap still runs', () => {
    const { dist } = build();
    try {
      wrapChunks(dist, ['cli.cjs', 'chunks/a.cjs', 'chunks/b.cjs']);
      const text = readFileSync(join(dist, 'chunks/a.cjs'), 'utf8');
      expect(text.startsWith('(function (exports, require, module, __filename, __dirname) {\n')).toBe(true);
      expect(text.endsWith('\n});\n//# sourceMappingURL=a.cjs.map\n')).toBe(true);
      expect(JSON.parse(readFileSync(join(dist, 'chunks/a.cjs.map'), 'utf8')).mappings).toBe(';;AAAA');
      const loader = createLoader(dist, { NODE_DISABLE_COMPILE_CACHE: '1' });
      const cli = loader.load(join(dist, 'cli.cjs')) as { base: object; a: () => { shared: object }; b: () => { shared: object; big: number } };
      expect(cli.a().shared).toEqual({ shared: true });
      expect(cli.b().big).toBe(GUEST_MAX + 1); // big.cjs: not wrapped
    } finally {
      rmSync(dist, { recursive: true, force: true });
    }
  });
});

describe('exportsInPlace: a chunk exports the object its __export made', () => {
  it('the same names, live, enumerable and not configurable, marked __esModule; a runtime esbuild writes otherwise fails the build', () => {
    const dir = mkdtempSync(join(tmpdir(), 'opsctl-exports-'));
    try {
      const esm = 'export let n = 1; export function bump() { n++; } export const k = "k";';
      const { code } = transformSync(esm, { format: 'cjs', platform: 'node', target: 'node20', minifyWhitespace: true });
      writeFileSync(join(dir, 'x.cjs'), code);
      exportsInPlace(dir, ['x.cjs']);
      const after = readFileSync(join(dir, 'x.cjs'), 'utf8');
      expect(after).not.toContain('__copyProps(__defProp({}');
      expect(after.length).toBe(code.length);
      const x = createRequire(import.meta.url)(join(dir, 'x.cjs')) as { n: number; bump: () => void; k: string; __esModule: boolean };
      expect(Object.keys(x)).toEqual(['bump', 'k', 'n']);
      expect(x.__esModule).toBe(true);
      x.bump();
      expect(x.n).toBe(2);
      expect(Object.getOwnPropertyDescriptor(x, 'k')).toMatchObject({ enumerable: true, configurable: false });
      writeFileSync(join(dir, 'y.cjs'), 'var __toCommonJS=(m)=>m;module.exports=__toCommonJS({});');
      expect(() => exportsInPlace(dir, ['y.cjs'])).toThrow(/esbuild's __toCommonJS/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
