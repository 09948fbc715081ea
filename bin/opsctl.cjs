#!/usr/bin/env node
'use strict';
// Tiny launcher: `opsctl --version` is answered here, from package.json, before any of the CLI loads
// (commander would print the same line), and so is `opsctl [command words] --help`, from the texts the build
// rendered (dist/help/, scripts/help-texts.mjs); every other command line runs dist/cli.cjs through
// bin/load.cjs, which keeps a V8 code cache of the chunks. CommonJS, so Node's ES-module loader never
// starts; built-ins come from process.getBuiltinModule (no module resolution).
if (typeof process.getBuiltinModule !== 'function') {
  process.stderr.write(
    `X opsctl needs Node.js 20.18.1 or later; this is ${process.version}\n  install a newer Node.js, or use the single executable (npm run package), which carries its own\n`,
  );
  process.exit(1);
}
const path = process.getBuiltinModule('node:path');

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  const { readFileSync } = process.getBuiltinModule('node:fs');
  require('./help.cjs').printOut(`${JSON.parse(readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')).version}\n`);
} else if (/^(--help|-h)$/.test(argv[argv.length - 1] ?? '') && require('./help.cjs').renderedHelp(argv, readHelp)) {
  // printed from the build's texts
} else {
  const dist = path.join(__dirname, '..', 'dist');
  const entry = path.join(dist, 'cli.cjs');
  if (!process.getBuiltinModule('node:fs').existsSync(entry) && !builtMeanwhile(dist, entry)) {
    // a checkout that was never built (npm install builds it), or a dist/ removed by hand
    process.stderr.write(`X opsctl is not built: ${entry} is missing\n  run npm run build (or npm install) in ${path.dirname(__dirname)}\n`);
    process.exit(1);
  }
  const loader = require('./load.cjs').createLoader(dist);
  process.on('exit', loader.save);
  loader.load(entry).run();
}

/** dist/help/'s file `name`. */
function readHelp(name) {
  return process.getBuiltinModule('node:fs').readFileSync(path.join(__dirname, '..', 'dist', 'help', name), 'utf8');
}

/**
 * dist/ is missing while `npm run build` of this checkout runs (its .dist-build-<pid>-* beside dist/, its
 * process alive): the instant its finished build is renamed into place, or a first build. Waits for that
 * build's dist/ (a condition, up to 5 minutes), so an opsctl started meanwhile runs it; false when no build
 * is under way or it ended without one.
 */
function builtMeanwhile(dist, entry) {
  const fs = process.getBuiltinModule('node:fs');
  const building = () => {
    try {
      return fs.readdirSync(path.dirname(dist)).some((n) => {
        const pid = Number(/^\.dist-build-(\d+)-/.exec(n)?.[1]);
        if (!pid) return false;
        try {
          process.kill(pid, 0);
          return true;
        } catch (err) {
          return err.code === 'EPERM';
        }
      });
    } catch {
      return false;
    }
  };
  const started = Date.now();
  const nap = new Int32Array(new SharedArrayBuffer(4));
  let said = false;
  while (!fs.existsSync(entry)) {
    if (!building() || Date.now() - started > 300_000) return false;
    if (!said && Date.now() - started > 1000) {
      said = true;
      process.stderr.write('opsctl: waiting for the build of this checkout that is under way (npm run build)\n');
    }
    Atomics.wait(nap, 0, 0, 20);
  }
  return true;
}
