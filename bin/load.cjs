'use strict';
// Loads dist/'s CommonJS chunks with a V8 code cache, as Node 22's module.enableCompileCache does for
// every module (Node 20 has no such switch): the first run of a command compiles its chunks and, at exit,
// writes what V8 compiled (the functions that ran included); later runs hand it back to V8 instead of
// parsing and compiling again. For `tracker labels list` that is about a third of its start-up CPU.
//
// The cache is a cache: a directory that cannot be made or written, a file that cannot be read, or data
// V8 refuses (another Node, other flags, a damaged file) only means compiling as without one.
// - where: $OPSCTL_CODE_CACHE, else $XDG_CACHE_HOME/opsctl/code, else ~/.cache/opsctl/code; one
//   directory per build (dist/build-id, a hash of every chunk) and Node version, so code compiled for
//   other sources is never used (V8 itself checks only a source's length); the 3 newest are kept;
// - whose: a directory that is not the user's own, or that others may write, is not read (cached
//   bytecode runs as the user); files are written to a temporary name and renamed into place;
// - off: NODE_DISABLE_COMPILE_CACHE=1, as for Node's own cache.
// Chunks require each other by relative path and built-ins by name: both are answered here without
// Node's module resolution; anything else (the external packages) goes to Node's require.
const fs = process.getBuiltinModule('node:fs');
const path = process.getBuiltinModule('node:path');
const vm = process.getBuiltinModule('node:vm');
const Module = process.getBuiltinModule('node:module');

const KEEP = 3;
/**
 * How the build starts each chunk's file (scripts/pack-chunks.mjs wrapChunks): already the function a CommonJS module is
 * compiled as, so the loader hands V8 the file's text as it is, where Module.wrap(text) would make a second copy of
 * every chunk's source on the heap (young space: about 2% of an embedded list's instructions, and a scavenge).
 * A file without it (an older build, the tests' own chunks) is wrapped here.
 */
const WRAPPED_HEAD = '(function (exports, require, module, __filename, __dirname) {\n';
/** ./name or ./dir/name, no . or .. segment: `here + id.slice(1)` is already the normal path (path.join's result). */
const PLAIN_RELATIVE = /^\.(\/[^./][^/]*)+$/;

/**
 * V8 keys cached code by a hash of its flags, taken when code is compiled and when its cache is written.
 * src/core/wasm.ts turns WebAssembly tiering to Liftoff only when undici or jq loads (a short-lived CLI
 * never earns back a second, optimising compile), in the middle of a run, and marks it here. So the
 * chunks compiled before it are written just before the change (wasm.ts calls the loader's flush: with the
 * flags they were compiled under; what runs later is not in their cache), and the ones compiled after it go
 * to a cache of their own (`liftoff/` in the build's directory). (Setting the flag at start for every command would cost more: Node's own
 * code cache of its built-in modules is refused once a flag changes, so each built-in loaded after it
 * is compiled from source; a kv verb's node:http alone is 5% of its CPU.)
 */
const LIFTOFF = Symbol.for('opsctl.v8.liftoff-only');
const liftoffSet = () => globalThis[LIFTOFF] === true;
/** Called by wasm.ts just before it changes the flags: the chunks compiled so far are written with the flags they were compiled under. */
const FLUSH = Symbol.for('opsctl.code-cache.flush');
/** The id a host chunk requires to hand its guests to the loader (scripts/pack-chunks.mjs). */
const GUESTS = 'opsctl:chunks';
/** Set by a test's --require hook (test/helpers/record-modules.cjs): told each chunk as it runs, from its own file or a host's. */
const RAN = Symbol.for('opsctl.chunk-ran');
const ran = (file) => globalThis[RAN]?.(file);

/** Where the chunks come from: files under dist/ (the npm package), or the single executable's assets. */
const FILES = {
  read: (file) => fs.readFileSync(file, 'utf8'),
  /** Code compiled at package time for this chunk (the single executable only). */
  baked: () => undefined,
};

/** This build's cache directory, or undefined when there is none to use. */
function cacheDir(dist, env, source) {
  if (env.NODE_DISABLE_COMPILE_CACHE) return undefined;
  let id;
  try {
    id = source.read(path.join(dist, 'build-id')).trim();
  } catch {
    return undefined;
  }
  if (!/^[0-9a-f]{16}$/.test(id)) return undefined;
  const home = env.HOME;
  const root =
    env.OPSCTL_CODE_CACHE || (env.XDG_CACHE_HOME ? path.join(env.XDG_CACHE_HOME, 'opsctl', 'code') : home ? path.join(home, '.cache', 'opsctl', 'code') : '');
  if (!path.isAbsolute(root)) return undefined;
  return path.join(root, `${id}-${process.version}-${process.arch}`);
}

/** Whether `dir` exists, is a directory of this user's, and only this user can write it. */
function ownDir(dir) {
  try {
    const st = fs.statSync(dir);
    return st.isDirectory() && (typeof process.getuid !== 'function' || st.uid === process.getuid()) && (st.mode & 0o022) === 0;
  } catch {
    return false;
  }
}

/**
 * A loader for the chunks under `dist`: `load(file)` runs a chunk (once) and returns its exports.
 * `stats` counts what happened, for the tests: chunks compiled from the cache, compiled afresh, written.
 * `source` reads a chunk (default: the file); the single executable passes its assets and the code its
 * chunks were compiled to at package time, used before the user's cache directory.
 */
function createLoader(dist, env = process.env, source = FILES) {
  const dir = cacheDir(dist, env, source);
  const usable = dir !== undefined && ownDir(dir);
  const modules = new Map();
  const fresh = [];
  const stats = { cached: 0, compiled: 0, written: 0, dir };

  /** Chunks folded into another chunk's file by the build (scripts/pack-chunks.mjs): their code, by path, until first required. */
  const guests = new Map();

  function load(file) {
    const known = modules.get(file);
    if (known) return known.exports;
    const module = { exports: {} };
    modules.set(file, module);
    const guest = guests.get(file);
    if (guest) {
      guests.delete(file);
      ran(file);
      guest.call(module.exports, module.exports, requireFrom(file), module, file, path.dirname(file));
      return module.exports;
    }
    const code = readChunk(file);
    const afterFlags = liftoffSet();
    const cacheFile = dir && path.join(afterFlags ? path.join(dir, 'liftoff') : dir, `${path.basename(file)}.v8`);
    let cachedData = env.NODE_DISABLE_COMPILE_CACHE ? undefined : source.baked(file);
    if (!cachedData && usable) {
      try {
        cachedData = fs.readFileSync(cacheFile);
      } catch {
        // not cached yet
      }
    }
    const script = new vm.Script(code.startsWith(WRAPPED_HEAD) ? code : Module.wrap(code), { filename: file, cachedData });
    if (cachedData && !script.cachedDataRejected) stats.cached++;
    else {
      stats.compiled++;
      if (cacheFile) fresh.push({ script, cacheFile, afterFlags });
    }
    ran(file);
    script.runInThisContext().call(module.exports, module.exports, requireFrom(file), module, file, path.dirname(file));
    return module.exports;
  }

  /** The `require` of the chunk `file`. */
  function requireFrom(file) {
    const here = path.dirname(file);
    let external;
    const require = (id) => {
      // a chunk beside or under this one (./chunk-X.cjs, ./chunks/chunk-X.cjs): the path as it is, no normalising
      if (path.sep === '/' && PLAIN_RELATIVE.test(id)) return load(here + id.slice(1));
      if (id.startsWith('./') || id.startsWith('../')) return load(path.join(here, id));
      if (Module.isBuiltin(id)) return process.getBuiltinModule(id);
      if (id === GUESTS) return addGuests;
      return (external ??= Module.createRequire(file))(id);
    };
    require.resolve = (id, options) => (external ??= Module.createRequire(file)).resolve(id, options);
    return require;
  }

  /** A host chunk's guests (`{ './chunk-X.cjs': function (exports, require, module, __filename, __dirname) {…} }`), under their own paths. */
  function addGuests(dir, code) {
    for (const [id, fn] of Object.entries(code)) {
      const file = path.sep === '/' && PLAIN_RELATIVE.test(id) ? dir + id.slice(1) : path.join(dir, id);
      // a chunk already run from its own file stays the one module of that path
      // (the first copy registered of a chunk two hosts carry is the one kept: the same code)
      if (!modules.has(file) && !guests.has(file)) guests.set(file, fn);
    }
  }

  /**
   * A chunk's code. A chunk missing from dist/ because `npm run build` replaced dist/ since this process
   * started (scripts/build.mjs moves the build it replaces aside, to .dist-old-*, and keeps the newest) is read
   * from there: its name holds a hash of its content, so a file of that name anywhere is that chunk.
   */
  function readChunk(file) {
    try {
      return source.read(file);
    } catch (err) {
      const rel = path.relative(dist, file);
      if (err.code !== 'ENOENT' || source !== FILES || rel.startsWith('..')) throw err;
      for (const old of earlierBuilds(dist)) {
        try {
          return fs.readFileSync(path.join(old, rel), 'utf8');
        } catch {
          // not in that one either
        }
      }
      throw err;
    }
  }

  /** Writes the code of the chunks compiled afresh (call at exit: it then holds the functions that ran). */
  function save() {
    if (!dir || fresh.length === 0) return;
    const written = fresh.splice(0);
    try {
      if (!fs.existsSync(dir)) {
        makeDirs(dir);
        prune(path.dirname(dir), path.basename(dir));
      }
      if (!ownDir(dir)) return;
      const changed = liftoffSet();
      for (const { script, cacheFile, afterFlags } of written) {
        // compiled before the flags changed: its data would carry the new flags' hash, refused next time
        if (changed && !afterFlags) continue;
        if (afterFlags && !fs.existsSync(path.dirname(cacheFile))) fs.mkdirSync(path.dirname(cacheFile), { mode: 0o700 });
        const temp = `${cacheFile}.${process.pid}.tmp`;
        fs.writeFileSync(temp, script.createCachedData(), { mode: 0o600 });
        fs.renameSync(temp, cacheFile);
        stats.written++;
      }
    } catch {
      // a cache that cannot be written is only slower next time
    }
  }

  globalThis[FLUSH] = save;
  return { load, save, stats };
}

/**
 * Creates `dir` and its missing parents as 0700, one at a time: a recursive mkdir never returns under
 * /proc (a HOME there), and any parent that cannot be made ends it with an error.
 */
function makeDirs(dir) {
  const missing = [];
  for (let p = dir; !fs.existsSync(p) && path.dirname(p) !== p; p = path.dirname(p)) missing.unshift(p);
  for (const p of missing) fs.mkdirSync(p, { mode: 0o700 });
}

/** The builds a rebuild moved aside beside `dist` (.dist-old-<time>-…), newest first. */
function earlierBuilds(dist) {
  const root = path.dirname(dist);
  try {
    return fs
      .readdirSync(root)
      .filter((n) => n.startsWith('.dist-old-'))
      .sort((a, b) => (Number(b.slice(10).split('-')[0]) || 0) - (Number(a.slice(10).split('-')[0]) || 0))
      .map((n) => path.join(root, n));
  } catch {
    return [];
  }
}

/** Removes the caches of other builds but the newest few (by when they were last written). */
function prune(root, keep) {
  const builds = fs
    .readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory() && e.name !== keep && /^[0-9a-f]{16}-v[\d.]+-\w+$/.test(e.name))
    .map((e) => ({ name: e.name, at: fs.statSync(path.join(root, e.name)).mtimeMs }))
    .sort((a, b) => b.at - a.at);
  for (const old of builds.slice(KEEP - 1)) fs.rmSync(path.join(root, old.name), { recursive: true, force: true });
}

module.exports = { createLoader, WRAPPED_HEAD };
