// The single executable's blob (what postject injects into a copy of node): bin/sea.cjs bundled with
// bin/load.cjs as the main script (with the code cache Node compiles for it: `useCodeCache`), dist/'s chunks,
// help texts and build id as assets, and the code V8 compiled for the chunks at package time (their `cache/`
// assets: scripts/sea-cache.mjs). No start-up snapshot (`useSnapshot`): measured beside the code cache it was
// no faster (docs/development.md, issue 60), and it would hold the heap as the CLI left it while loading, so
// what the CLI read from its environment at module level would be the build machine's.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { bakeCodeCache } from './sea-cache.mjs';

/**
 * Writes the blob into the directory `out` from the dist/ at `dist` (both absolute or relative to the working
 * directory) and returns its path. `extraEnv` is for the tests: what must reach neither the cache nor the blob.
 */
export async function seaBlob(dist, out, extraEnv = {}) {
  const here = (p) => resolve(p);
  // The main script: bin/sea.cjs with bin/load.cjs (a single executable's main script is one CommonJS
  // file that may require only built-in modules). Everything else is dist/ itself, as assets.
  await build({
    entryPoints: { opsctl: fileOf('../bin/sea.cjs') },
    outdir: out,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
  });
  // The code of dist/'s chunks, compiled at package time by this node (the executable's own): bin/load.cjs
  // writes what V8 compiled for the chunks a command ran, the functions that ran included, in an environment
  // of its own and under a neutral name (scripts/sea-cache.mjs: no path, user or secret of this machine).
  const baked = bakeCodeCache(here(dist), join(out, 'cache'), extraEnv);
  const assets = { version: join(out, 'version') };
  writeFileSync(assets.version, JSON.parse(readFileSync(fileOf('../package.json'), 'utf8')).version);
  for (const file of [
    'build-id',
    ...readdirSync(dist).filter((f) => f.endsWith('.cjs')),
    ...readdirSync(join(dist, 'chunks'))
      .filter((f) => f.endsWith('.cjs'))
      .map((f) => `chunks/${f}`),
    ...readdirSync(join(dist, 'help')).map((f) => `help/${f}`),
  ])
    assets[file] = join(dist, file);
  for (const f of baked) assets[`cache/${f}`] = join(out, 'cache', f);
  const blob = join(out, 'opsctl.blob');
  // run in out/ with the main script named `opsctl.js`: the name the blob (and its main script's code cache)
  // keeps, where the staging directory's would name this build's temporary directory
  writeFileSync(
    join(out, 'sea-config.json'),
    JSON.stringify(
      {
        main: 'opsctl.js',
        output: here(blob),
        disableExperimentalSEAWarning: true,
        useCodeCache: true,
        assets: Object.fromEntries(Object.entries(assets).map(([k, v]) => [k, here(v)])),
      },
      null,
      2,
    ),
  );
  execFileSync(process.execPath, ['--experimental-sea-config', 'sea-config.json'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    cwd: out,
    env: { ...process.env, ...extraEnv },
  });
  return blob;
}

function fileOf(rel) {
  return new URL(rel, import.meta.url).pathname;
}
