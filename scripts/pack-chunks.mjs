// Fewer files at start-up: esbuild splits dist/ into a chunk per set of entry points that share code, so a
// kv verb ran about 50 chunks, each a file read, a code-cache read and a vm.Script of its own (issue 47:
// those per-file costs were about a tenth of `node -e 0` for `kv get`). This folds chunks into the chunk
// that needs them, their "host", so a command reads a file per lazily loaded part instead of per chunk:
// - the roots are the main entry point and every chunk loaded with import() (a noun, a verb's run, ...);
// - each root carries a copy of every chunk it needs that no root always loaded before it (its dominators
//   in the graph of roots) needs: nothing is read that was not read before, and a chunk two verbs share
//   is in both verbs' files. A chunk larger than GUEST_MAX keeps a file of its own only.
// A chunk is one module wherever its code is: the loader runs it once, under its own path, from the first
// copy registered (or from its own file, if it was required before any host registered it).
// A host's file starts with one line registering its guests with bin/load.cjs (`require('opsctl:chunks')`),
// which then runs a guest from there, once, when it is first required, exactly as it would have run its
// file; the guests' own files stay in dist/ (with their source maps), so a chunk is found either way.
// The guests' code is appended as a hoisted function: the host's source map only gains one line.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';

const { WRAPPED_HEAD } = createRequire(import.meta.url)('../bin/load.cjs');

/** A chunk larger than this keeps its own file: copied into every root that needs it, it would grow dist/ too much for the file it saves. */
export const GUEST_MAX = 32 * 1024;

/**
 * `meta`: esbuild's metafile of the ES-module step (its outputs named as in dist/, under `esm`);
 * `stage`: the CommonJS build, rewritten in place; `entries`: its entry files (`cli.cjs`, ...), the
 * first the program whose start-up this is for (the others' chunks are left as they are).
 * Returns { host: [guest, ...] } for the build log and the tests.
 */
export function packChunks(meta, esm, stage, entries) {
  const name = (p) => relative(esm, p).split('\\').join('/');
  const graph = new Map();
  for (const [out, info] of Object.entries(meta.outputs)) {
    if (!out.endsWith('.cjs')) continue;
    const deps = { static: [], dynamic: [] };
    for (const imp of info.imports) {
      if (imp.external || !imp.path.endsWith('.cjs')) continue;
      (imp.kind === 'dynamic-import' ? deps.dynamic : deps.static).push(name(imp.path));
    }
    graph.set(name(out), deps);
  }
  const sizes = new Map();
  const size = (c) => sizes.get(c) ?? sizes.set(c, readFileSync(join(stage, c)).length).get(c);
  const closure = (root) => {
    const seen = new Set([root]);
    const todo = [root];
    while (todo.length) for (const d of graph.get(todo.pop())?.static ?? []) if (!seen.has(d) && seen.add(d)) todo.push(d);
    return seen;
  };
  const [main] = entries;
  const roots = new Set([main, ...[...graph.values()].flatMap((d) => d.dynamic)]);
  const needs = new Map([...roots].map((r) => [r, closure(r)]));
  // the graph of roots: R1 -> R2 when R1's chunks import() R2 (or require it)
  const next = new Map(
    [...roots].map((r) => [r, new Set([...needs.get(r)].flatMap((c) => [...graph.get(c).dynamic, ...(roots.has(c) && c !== r ? [c] : [])]))]),
  );
  const dominators = dominatorSets(main, roots, next);
  const hosts = new Map();
  for (const root of dominators.keys()) {
    // what the roots always loaded before this one need is theirs already (or too big to copy)
    const before = [...dominators.get(root)].filter((d) => d !== root);
    const guests = [...needs.get(root)].filter(
      (c) => c !== root && !roots.has(c) && !entries.includes(c) && !before.some((d) => needs.get(d).has(c)) && size(c) <= GUEST_MAX,
    );
    if (guests.length) hosts.set(root, guests);
  }
  for (const [host, guests] of hosts) writePack(stage, host, guests.sort());
  return Object.fromEntries(hosts);
}

/** Each root's dominators (itself included), for the roots reachable from `start` (the iterative data-flow form). */
function dominatorSets(start, roots, next) {
  const reach = new Set([start]);
  const todo = [start];
  while (todo.length) for (const n of next.get(todo.pop()) ?? []) if (!reach.has(n) && reach.add(n)) todo.push(n);
  const preds = new Map([...reach].map((r) => [r, []]));
  for (const r of reach) for (const n of next.get(r)) preds.get(n)?.push(r);
  const dom = new Map([...reach].map((r) => [r, r === start ? new Set([start]) : new Set(reach)]));
  for (let changed = true; changed;) {
    changed = false;
    for (const r of reach) {
      if (r === start) continue;
      const ps = preds.get(r).map((p) => dom.get(p));
      // a fresh set (a reduce of one set would be that set itself)
      const meet = new Set(ps.length ? [...ps[0]].filter((x) => ps.every((d) => d.has(x))) : []);
      meet.add(r);
      if (meet.size !== dom.get(r).size) {
        dom.set(r, meet);
        changed = true;
      }
    }
  }
  return dom;
}

/** Rewrites `host` (a file of `stage`) to register `guests` with the loader on its first line; its source map gains that line. */
function writePack(stage, host, guests) {
  const hostDir = host.includes('/') ? host.slice(0, host.lastIndexOf('/') + 1) : '';
  const body = guests
    .map((g) => {
      const code = readFileSync(join(stage, g), 'utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n');
      // the guest's path from the host's directory, as a require of it would name it
      const from = `./${relative(hostDir || '.', g)
        .split('\\')
        .join('/')}`;
      return `${JSON.stringify(from)}:function(exports,require,module,__filename,__dirname){${code}}`;
    })
    .join(',\n');
  const text = readFileSync(join(stage, host), 'utf8');
  const mark = text.lastIndexOf('\n//# sourceMappingURL=');
  const [code, tail] = mark < 0 ? [text, ''] : [text.slice(0, mark), text.slice(mark)];
  writeFileSync(join(stage, host), `require("opsctl:chunks")(__dirname,__opsctlGuests());\n${code}\nfunction __opsctlGuests(){return{\n${body}\n}}${tail}`);
  const mapFile = join(stage, `${host}.map`);
  const map = JSON.parse(readFileSync(mapFile, 'utf8'));
  map.mappings = `;${map.mappings}`;
  writeFileSync(mapFile, JSON.stringify(map));
}

/**
 * Each of `files` (of `stage`) as bin/load.cjs compiles it: the function a CommonJS module is compiled as, its head on
 * a line of its own (the source map gains that line) and its end before the source map's comment, so the loader
 * gives V8 the text it read instead of a wrapped copy. Only for chunks the loader alone runs: Node's own require of
 * such a file would get nothing from it (the programs node runs by path, such as kv-member.cjs, stay as they are).
 */
export function wrapChunks(stage, files) {
  for (const file of files) {
    const text = readFileSync(join(stage, file), 'utf8');
    const mark = text.lastIndexOf('\n//# sourceMappingURL=');
    const [code, tail] = mark < 0 ? [text, ''] : [text.slice(0, mark), text.slice(mark)];
    writeFileSync(join(stage, file), `${WRAPPED_HEAD}${code}\n});${tail}`);
    const mapFile = join(stage, `${file}.map`);
    const map = JSON.parse(readFileSync(mapFile, 'utf8'));
    map.mappings = `;${map.mappings}`;
    writeFileSync(mapFile, JSON.stringify(map));
  }
}

/** esbuild's `__toCommonJS` (step 2's runtime): a copy of the exports object, each export a getter of the original's getter. */
const TO_COMMONJS = 'var __toCommonJS=mod=>__copyProps(__defProp({},"__esModule",{value:true}),mod);';
/** The same exports (its `__export` getters: the live bindings), the object itself marked as a module; padded to the same columns. */
const IN_PLACE = 'var __toCommonJS=mod=>__defProp(mod,"__esModule",{value:true});'.padEnd(TO_COMMONJS.length, ' ');

/**
 * Each chunk's `module.exports` is the object its `__export` made, not a copy of it: `__toCommonJS` defined a second
 * getter per export (a chunk exports up to a few hundred names) and every read went through two: 2.3 M instructions of
 * `kv get`, 6.4 M of the embedded list (docs/development.md, issue 60's ninth pass). The same names, enumerable
 * and not configurable as before, the same `__esModule`. Fails the build when esbuild's runtime reads otherwise.
 */
export function exportsInPlace(stage, files) {
  for (const file of files) {
    const path = join(stage, file);
    const text = readFileSync(path, 'utf8');
    if (!text.includes('__toCommonJS')) continue;
    if (!text.includes(TO_COMMONJS)) throw new Error(`dist/${file}: esbuild's __toCommonJS is not ${TO_COMMONJS}`);
    writeFileSync(path, text.replaceAll(TO_COMMONJS, IN_PLACE));
  }
}
