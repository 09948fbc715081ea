import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** How one file reaches another: a static import or export, one used only as types, or import(). */
export type ImportKind = 'static' | 'type' | 'dynamic';

export interface FileEdge {
  from: string;
  to: string;
  kind: ImportKind;
}

/**
 * Every relative import of the TypeScript files under `dir`, type-only ones included (`import type`,
 * `export type … from`, named imports that are all `type`, `import('…')` in a type position) and
 * dynamic `import()`. Paths are relative to `dir`, with `/`.
 */
export function importEdges(dir: string): FileEdge[] {
  return moduleImports(dir).flatMap((i) => {
    const to = resolveSpecifier(join(dir, i.from), i.specifier);
    return to ? [{ from: i.from, to: posix(relative(dir, to)), kind: i.kind }] : [];
  });
}

/** One import of a file under `dir` as written: relative or of a package (`@opsctl/mock/console`). */
export interface ModuleImport {
  from: string;
  specifier: string;
  kind: ImportKind;
}

/** Every import of the TypeScript files under `dir`, read with the TypeScript parser (the kinds as importEdges's). */
export function moduleImports(dir: string): ModuleImport[] {
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
  const imports: ModuleImport[] = [];
  for (const file of files) {
    const abs = join(dir, file);
    const text = readFileSync(abs, 'utf8');
    const source = ts.createSourceFile(abs, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
    // import() (a call or a type) can sit anywhere; a file without one needs only its top-level statements read
    const deep = text.includes('import(');
    const from = posix(relative(dir, abs));
    const add = (specifier: string, kind: ImportKind) => imports.push({ from, specifier, kind });
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
        add(node.moduleSpecifier.text, importIsTypeOnly(node) ? 'type' : 'static');
      } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
        const typeOnly =
          node.isTypeOnly || (node.exportClause && ts.isNamedExports(node.exportClause) && node.exportClause.elements.every((e) => e.isTypeOnly));
        add(node.moduleSpecifier.text, typeOnly ? 'type' : 'static');
      } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
        add(node.argument.literal.text, 'type');
      } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
        const [arg] = node.arguments;
        if (arg && ts.isStringLiteralLike(arg)) add(arg.text, 'dynamic');
      }
      if (deep) ts.forEachChild(node, visit);
    };
    source.statements.forEach(visit);
  }
  return imports;
}

function importIsTypeOnly(node: ts.ImportDeclaration): boolean {
  const clause = node.importClause;
  if (!clause) return false; // `import './x.js'`: a side effect
  if (clause.isTypeOnly) return true;
  if (clause.name) return false;
  const bindings = clause.namedBindings;
  return Boolean(bindings && ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly));
}

/** `./x.js` → x.ts (or x/index.ts); packages and non-TypeScript files → undefined. */
function resolveSpecifier(fromFile: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(fromFile), specifier);
  const candidates = [base.replace(/\.(js|mjs|cjs)$/, '.ts'), `${base}.ts`, join(base, 'index.ts')];
  return candidates.find((c) => c.endsWith('.ts') && existsSync(c));
}

function posix(p: string): string {
  return p.split(sep).join('/');
}

/** A room: a top-level folder of src/ (`auth`), or a file at its root (`context.ts`). */
export function roomOf(file: string): string {
  const i = file.indexOf('/');
  return i < 0 ? file : file.slice(0, i);
}

/** A sub-room of kv/ (`kv/cluster`), else the room (kv's own sub-rooms import one another one way too). */
export function kvRoomOf(file: string): string {
  const parts = file.split('/');
  return parts[0] === 'kv' && parts.length > 2 ? `kv/${parts[1]}` : roomOf(file);
}

/** A file as its own room, a verb's spec and run as one (the run imports its spec's types, the spec loads the run). */
export function fileRoomOf(file: string): string {
  return file.replace(/\.spec\.ts$/, '.ts');
}

export interface RoomCycle {
  /** The rooms in order, the first repeated at the end: ['auth', 'context.ts', 'auth']. */
  rooms: string[];
  /** For each step, one file import that makes it. */
  via: FileEdge[];
}

/**
 * The cycles between rooms: one per strongly connected group of rooms (Tarjan), named by its shortest
 * cycle through the group's first room, each step shown by one import that makes it.
 */
export function roomCycles(edges: readonly FileEdge[], room: (file: string) => string = roomOf): RoomCycle[] {
  const graph = roomGraph(edges, room);
  return stronglyConnected(graph)
    .filter((group) => group.length > 1)
    .map((group) => {
      const rooms = shortestCycle(graph, [...group].sort()[0] as string, new Set(group));
      const via = rooms.slice(1).map((to, i) => {
        const from = rooms[i] as string;
        return graph.get(from)?.get(to)?.[0] as FileEdge;
      });
      return { rooms, via };
    });
}

/** Every simple cycle between rooms (for figures: how tangled the rooms are). */
export function allRoomCycles(edges: readonly FileEdge[], room: (file: string) => string = roomOf): string[][] {
  const graph = roomGraph(edges, room);
  const rooms = [...graph.keys()].sort();
  const out: string[][] = [];
  // each cycle is found once, from its smallest room
  for (const start of rooms) {
    const path = [start];
    const onPath = new Set(path);
    const walk = (at: string) => {
      for (const next of graph.get(at)?.keys() ?? []) {
        if (next === start) out.push([...path, start]);
        else if (next > start && !onPath.has(next)) {
          path.push(next);
          onPath.add(next);
          walk(next);
          path.pop();
          onPath.delete(next);
        }
      }
    };
    walk(start);
  }
  return out;
}

function roomGraph(edges: readonly FileEdge[], room: (file: string) => string): Map<string, Map<string, FileEdge[]>> {
  const graph = new Map<string, Map<string, FileEdge[]>>();
  for (const e of edges) {
    const a = room(e.from);
    const b = room(e.to);
    if (!graph.has(b)) graph.set(b, new Map());
    const out = graph.get(a) ?? new Map<string, FileEdge[]>();
    graph.set(a, out);
    if (a === b) continue;
    const list = out.get(b) ?? [];
    list.push(e);
    out.set(b, list);
  }
  return graph;
}

function stronglyConnected(graph: Map<string, Map<string, FileEdge[]>>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const connect = (v: string) => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!idx.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, idx.get(w) as number));
    }
    if (low.get(v) === idx.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      groups.push(group);
    }
  };
  for (const v of [...graph.keys()].sort()) if (!idx.has(v)) connect(v);
  return groups;
}

function shortestCycle(graph: Map<string, Map<string, FileEdge[]>>, start: string, within: Set<string>): string[] {
  const prev = new Map<string, string>();
  const queue = [start];
  while (queue.length) {
    const at = queue.shift() as string;
    for (const next of [...(graph.get(at)?.keys() ?? [])].sort()) {
      if (!within.has(next)) continue;
      if (next === start) {
        const path = [at];
        while (path[0] !== start) path.unshift(prev.get(path[0] as string) as string);
        return [...path, start];
      }
      if (!prev.has(next)) {
        prev.set(next, at);
        queue.push(next);
      }
    }
  }
  return [start];
}
