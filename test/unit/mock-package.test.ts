import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import trackerService from '@opsctl/mock/services/tracker/index.js';
import { RESOURCES } from '@opsctl/shared/tracker/resources.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Every module specifier a TypeScript file names: static, dynamic and type-only imports, and re-exports. */
function specifiers(text: string): string[] {
  const out: string[] = [];
  const patterns = [/\bfrom\s*['"]([^'"]+)['"]/g, /\bimport\s*\(\s*['"]([^'"]+)['"]/g, /^\s*import\s*['"]([^'"]+)['"]/gm];
  for (const re of patterns) for (const m of text.matchAll(re)) if (m[1]) out.push(m[1]);
  return out;
}

/** Where a specifier leads, as a path from the repository root: a workspace package by name, a relative path by where it points. */
function target(file: string, spec: string): string {
  if (spec === '@opsctl/mock' || spec.startsWith('@opsctl/mock/')) return `packages/mock/src/${spec.slice('@opsctl/mock/'.length)}`;
  if (spec.startsWith('@opsctl/shared/')) return `packages/shared/src/${spec.slice('@opsctl/shared/'.length)}`;
  if (spec.startsWith('.'))
    return relative(ROOT, resolve(dirname(join(ROOT, file)), spec))
      .split(sep)
      .join('/');
  return `node_modules/${spec}`;
}

/** The files (paths from the root) and their specifiers, for every .ts under `dir`. */
function tree(dir: string): Array<{ file: string; spec: string; to: string }> {
  return readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .flatMap((f) => {
      const file = `${dir}/${f.split(sep).join('/')}`;
      return specifiers(readFileSync(join(ROOT, file), 'utf8')).map((spec) => ({ file, spec, to: target(file, spec) }));
    });
}

/** The import rules of the two workspace packages; each broken rule as `file imports spec (why)`. */
export function boundaryProblems(edges: ReadonlyArray<{ file: string; spec: string; to: string }>): string[] {
  const problems: string[] = [];
  for (const { file, spec, to } of edges) {
    const intoMock = to.startsWith('packages/mock/');
    if (file.startsWith('src/') && intoMock) {
      // the CLI reaches the mock through its public entries only, from the wiring and the mock's own verbs
      const allowed = file.startsWith('src/wiring/') ? ['@opsctl/mock'] : file.startsWith('src/commands/mock/') ? ['@opsctl/mock', '@opsctl/mock/console'] : [];
      if (!allowed.includes(spec))
        problems.push(`${file} imports ${spec} (only src/wiring/ and src/commands/mock/ may, through ${allowed.join(' or ') || '@opsctl/mock'})`);
    }
    if (file.startsWith('packages/mock/') && (to.startsWith('src/') || to.startsWith('test/')))
      problems.push(`${file} imports ${spec} (the mock imports nothing of the CLI: share it through @opsctl/shared)`);
    if (file.startsWith('packages/shared/') && (to.startsWith('src/') || to.startsWith('test/') || intoMock))
      problems.push(`${file} imports ${spec} (@opsctl/shared imports neither the CLI nor the mock)`);
  }
  return problems;
}

describe('the mock is its own package (packages/mock), reached only through the wiring', () => {
  const edges = [...tree('src'), ...tree('packages/mock/src'), ...tree('packages/shared/src')];

  it('nothing in src/ but src/wiring/ and src/commands/mock/ imports the mock, which imports nothing of src/', () => {
    // the whole tree was read
    expect(edges.some((e) => e.file === 'src/cli.ts')).toBe(true);
    expect(edges.some((e) => e.file === 'packages/mock/src/services/tracker/epics.ts')).toBe(true);
    expect(boundaryProblems(edges)).toEqual([]);
    // and the wiring does use it (the rule is not met by accident)
    expect(edges.filter((e) => e.to.startsWith('packages/mock/') && e.file.startsWith('src/')).map((e) => e.file.split('/').slice(0, 3).join('/'))).toContain(
      'src/wiring/embedded.ts',
    );
  });

  it('the check names a CLI file that imports the mock, and a mock file that imports the CLI', () => {
    const planted = [
      { file: 'src/tracker/token.ts', spec: '@opsctl/mock', to: target('src/tracker/token.ts', '@opsctl/mock') },
      { file: 'src/auth/login.ts', spec: '../../packages/mock/src/store.js', to: target('src/auth/login.ts', '../../packages/mock/src/store.js') },
      { file: 'src/wiring/embedded.ts', spec: '@opsctl/mock/store.js', to: target('src/wiring/embedded.ts', '@opsctl/mock/store.js') },
      { file: 'packages/mock/src/store.ts', spec: '../../../src/core/errors.js', to: target('packages/mock/src/store.ts', '../../../src/core/errors.js') },
      { file: 'packages/shared/src/lock.ts', spec: '@opsctl/mock', to: target('packages/shared/src/lock.ts', '@opsctl/mock') },
      // allowed: the wiring, the mock's verbs, the shared package from either side
      { file: 'src/wiring/embedded.ts', spec: '@opsctl/mock', to: target('src/wiring/embedded.ts', '@opsctl/mock') },
      { file: 'src/commands/mock/events-trigger.ts', spec: '@opsctl/mock/console', to: target('src/commands/mock/events-trigger.ts', '@opsctl/mock/console') },
      { file: 'packages/mock/src/store.ts', spec: '@opsctl/shared/lock.js', to: target('packages/mock/src/store.ts', '@opsctl/shared/lock.js') },
    ];
    const problems = boundaryProblems(planted);
    expect(problems).toHaveLength(5);
    expect(problems[0]).toMatch(/^src\/tracker\/token\.ts imports @opsctl\/mock \(only src\/wiring\//);
    expect(problems[1]).toContain('src/auth/login.ts imports ../../packages/mock/src/store.js');
    expect(problems[2]).toContain('src/wiring/embedded.ts imports @opsctl/mock/store.js');
    expect(problems[3]).toContain('the mock imports nothing of the CLI');
    expect(problems[4]).toContain('@opsctl/shared imports neither');
  });

  it('finds type-only, dynamic and re-exporting imports too', () => {
    expect(specifiers("import type { A } from 'a';\nconst b = await import('b');\nexport * from 'c';\nimport 'd';\nexport { e } from \"e\";")).toEqual([
      'a',
      'c',
      'e',
      'b',
      'd',
    ]);
  });
});

// Issue 36 item 4: one resource table (generated from the contract), read by the CLI and the mock alike.
describe("the mock's tracker routes are the shared resource table's", () => {
  it('every verb of the table has its route in the mock, and no CRUD route is served that the table lacks', async () => {
    const ctx = { store: undefined as never, now: () => 0, options: {}, service: () => Promise.reject(new Error('no sibling services here')) };
    const service = await trackerService.create(ctx);
    const routes = [...(service.routeGroups?.all() ?? []), ...service.routes];
    const key = (method: string, path: string) => `${method} ${path.replace(/^\/api\/v3/, '').replace(/\{[^}]+\}|:\w+/g, '{}')}`;
    const served = new Set(routes.map((r) => key(r.method, r.path)));
    const crud = { list: ['GET', ''], get: ['GET', '/{}'], create: ['POST', ''], update: ['PUT', '/{}'], delete: ['DELETE', '/{}'] } as const;
    const problems: string[] = [];
    let checked = 0;
    for (const r of RESOURCES) {
      const extras = new Set((r.extras ?? []).map((e) => key(e.method, e.path)));
      for (const [verb, [method, tail]] of Object.entries(crud)) {
        const route = key(method, r.path + tail);
        const inTable = (r.verbs as readonly string[]).includes(verb);
        if (inTable && !served.has(route)) problems.push(`${r.name} ${verb}: the mock serves no ${route}`);
        if (!inTable && served.has(route) && !extras.has(route)) problems.push(`${r.name}: the mock serves ${route}, which the table has no verb for`);
        checked += inTable ? 1 : 0;
      }
      for (const e of r.extras ?? []) {
        if (!served.has(key(e.method, e.path))) problems.push(`${r.name} ${e.name}: the mock serves no ${key(e.method, e.path)}`);
        checked++;
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(150);
  });
});
