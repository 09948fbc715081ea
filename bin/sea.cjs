'use strict';
// The main script of the single executable (`npm run package` bundles it with load.cjs): dist/'s own
// chunks, carried as the executable's assets, loaded as bin/opsctl.cjs loads them from disk, with the
// code V8 compiled them to at package time (the `cache/` assets), so a command compiles nothing it ran
// there; `--version` and a command's `--help` are answered before any of it, as bin/opsctl.cjs answers them. `opsctl __kv-member …` runs a simulated kv member (the sandbox's): a host without node has
// nothing else to run the member program with.
const path = process.getBuiltinModule('node:path');
const sea = process.getBuiltinModule('node:sea');
const { createLoader } = require('./load.cjs');

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  require('./help.cjs').printOut(`${sea.getAsset('version', 'utf8')}\n`);
} else if (/^(--help|-h)$/.test(argv[argv.length - 1] ?? '') && require('./help.cjs').renderedHelp(argv, (name) => sea.getAsset(`help/${name}`, 'utf8'))) {
  // printed from the build's texts (dist/help/)
} else {
  // Assets are named by their path under dist/; the loader sees them under a directory of their own.
  const dist = path.join(path.dirname(process.execPath), '.opsctl-sea', 'dist');
  const asset = (file) => path.relative(dist, file).split(path.sep).join('/');
  const source = {
    read: (file) => sea.getAsset(asset(file), 'utf8'),
    baked: (file) => {
      try {
        return Buffer.from(sea.getAsset(`cache/${path.basename(file)}.v8`));
      } catch {
        return undefined; // not run at package time: compiled here (and kept in the user's cache)
      }
    },
  };
  const loader = createLoader(dist, process.env, source);
  process.on('exit', loader.save);
  if (argv[0] === '__kv-member') {
    process.argv.splice(2, 1);
    loader.load(path.join(dist, 'kv-member.cjs'));
  } else loader.load(path.join(dist, 'cli.cjs')).run();
}
