import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fileRoomOf, importEdges, kvRoomOf, moduleImports, roomCycles, type FileEdge, type ModuleImport, type RoomCycle } from '../helpers/room-graph.js';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

/** A cycle as a reader needs it: the rooms, then the import that makes each step. */
function describeCycle(c: RoomCycle): string {
  return `${c.rooms.join(' -> ')}  (${c.via.map((e) => `${e.from} ${e.kind === 'static' ? '' : `${e.kind} `}imports ${e.to}`).join('; ')})`;
}

/** Imports of the mock package from outside the wiring and the `mock …` verbs, as `from kind imports specifier`. */
function mockImportsOutsideWiring(imports: readonly ModuleImport[]): string[] {
  return imports
    .filter((i) => /^@opsctl\/mock(\/|$)/.test(i.specifier) && !i.from.startsWith('wiring/') && !i.from.startsWith('commands/mock/'))
    .map((i) => `${i.from} ${i.kind === 'static' ? '' : `${i.kind} `}imports ${i.specifier}`.replace('  ', ' '))
    .sort();
}

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'opsctl-rooms-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

/**
 * A room is a top-level folder of src/ (auth, core, wiring…) or a file at its root (cli.ts, context.ts).
 * Rooms import one another one way only, type imports included: the port (context.ts) imports only
 * core/ and config/ types, the domains take narrow dependencies, and only wiring/ (built by cli.ts)
 * knows every room. The runtime cycles between files are import-cycles.test.ts's.
 */
describe('no import cycle between rooms, type imports included', () => {
  // read once: parsing every file of src/ is most of this file's time
  let cached: FileEdge[] | undefined;
  const srcEdges = () => (cached ??= importEdges(SRC));

  it('src/ has none', () => {
    const edges = srcEdges();
    // the whole tree was read, type-only imports and import() included
    expect(edges.length).toBeGreaterThan(1000);
    expect(edges.some((e) => e.kind === 'type' && e.to === 'context.ts')).toBe(true);
    expect(edges.some((e) => e.kind === 'dynamic' && e.from === 'cli.ts' && e.to === 'wiring/context.ts')).toBe(true);
    expect(roomCycles(edges).map(describeCycle)).toEqual([]);
  });

  it("kv's sub-rooms (cluster, snapshot, drivers, rules, journal, trial, upgrade, ladder, restore, sandbox, release, backups, report) import one another one way only", () => {
    const kv = srcEdges().filter((e) => e.from.startsWith('kv/') && e.to.startsWith('kv/'));
    expect(new Set(kv.map((e) => kvRoomOf(e.from))).size).toBeGreaterThanOrEqual(10);
    // every file of kv/ is in a sub-room: none at its root
    expect(kv.filter((e) => e.from.split('/').length < 3).map((e) => e.from)).toEqual([]);
    expect(roomCycles(kv, kvRoomOf).map(describeCycle)).toEqual([]);
  });

  it("no file imports itself back through others, type imports included, in src and every package (a verb's spec and its run are one)", () => {
    expect(roomCycles(srcEdges(), fileRoomOf).map(describeCycle)).toEqual([]);
    for (const pkg of ['shared/src', 'etcd-sim', 'mock/src']) {
      const edges = importEdges(fileURLToPath(new URL(`../../packages/${pkg}`, import.meta.url)));
      expect(edges.length, pkg).toBeGreaterThan(2);
      expect(roomCycles(edges, fileRoomOf).map(describeCycle), pkg).toEqual([]);
    }
  });

  it("kv's files stay small and its rooms few-filed: no file over 500 lines, no folder over 15 files", () => {
    const kvDir = join(SRC, 'kv');
    const files = readdirSync(kvDir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(50);
    const long = files.map((f) => [f, readFileSync(join(kvDir, f), 'utf8').split('\n').length - 1] as const).filter(([, n]) => n > 500);
    expect(long).toEqual([]);
    const perFolder = new Map<string, number>();
    for (const f of files) perFolder.set(dirname(f), (perFolder.get(dirname(f)) ?? 0) + 1);
    expect([...perFolder].filter(([, n]) => n > 15)).toEqual([]);
  });

  it('the port imports only types, and only of core/ and config/', () => {
    const fromPort = srcEdges().filter((e) => e.from === 'context.ts');
    expect(fromPort.length).toBeGreaterThan(0);
    expect(fromPort.filter((e) => e.kind !== 'type' || !/^(core|config)\//.test(e.to)).map((e) => `${e.kind} ${e.to}`)).toEqual([]);
  });

  it('only cli.ts builds the wiring: no verb or domain reaches past the port', () => {
    const intoWiring = srcEdges().filter((e) => e.to.startsWith('wiring/') && !e.from.startsWith('wiring/'));
    expect(intoWiring.length).toBeGreaterThan(0);
    expect(intoWiring.filter((e) => e.from !== 'cli.ts').map((e) => `${e.from} imports ${e.to}`)).toEqual([]);
  });

  it('only wiring/ imports the embedded mock (the package @opsctl/mock); the `mock …` verbs serve it', () => {
    const imports = moduleImports(SRC);
    // the mock is a package: its imports are read as written, type-only and import() included
    expect(imports.some((i) => i.from === 'wiring/embedded.ts' && i.specifier === '@opsctl/mock' && i.kind === 'dynamic')).toBe(true);
    expect(mockImportsOutsideWiring(imports)).toEqual([]);
  });

  it('the mock check fails for a domain that imports the mock, even a type only', () => {
    const dir = tree({
      'wiring/embedded.ts': "export const load = () => import('@opsctl/mock');\n",
      'commands/mock/serve.ts': "import { createMockServer } from '@opsctl/mock';\nexport const s = createMockServer;\n",
      'auth/id-token.ts': "import type { SigningKey } from '@opsctl/mock/services/oauth/jwt.js';\nexport type K = SigningKey;\n",
      'kv/x.ts': "export async function f() { return (await import('@opsctl/mock')).createMockServer; }\n",
      'core/free.ts': "import { x } from '@opsctl/mockingbird';\nexport const y = x;\n",
    });
    try {
      expect(mockImportsOutsideWiring(moduleImports(dir))).toEqual([
        'auth/id-token.ts type imports @opsctl/mock/services/oauth/jwt.js',
        'kv/x.ts dynamic imports @opsctl/mock',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('finds a cycle made only of type imports, and names it with the imports that make it', () => {
    const dir = tree({
      'a/one.ts': "import type { B } from '../b/two.js';\nexport type A = B;\n",
      'b/two.ts': "export type B = number;\nexport type Later = typeof import('../root.js');\n",
      'root.ts': "export async function load() { return import('./a/one.js'); }\n",
      'c/free.ts': "import { x } from './same-room.js';\nexport const y = x;\n",
      'c/same-room.ts': "import { y } from './free.js';\nexport const x = 1;\nexport const z = y;\n",
    });
    try {
      const cycles = roomCycles(importEdges(dir));
      expect(cycles.map(describeCycle)).toEqual([
        'a -> b -> root.ts -> a  (a/one.ts type imports b/two.ts; b/two.ts type imports root.ts; root.ts dynamic imports a/one.ts)',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
