'use strict';
// Run by scripts/sea-cache.mjs at package time: one opsctl command line, its chunks read from the dist/
// named by argv[2] but compiled under the neutral name /opsctl-sea/dist, so the code V8 writes for them
// (what the single executable carries as its `cache/` assets) names no directory of the build machine.
// V8 takes cached code whatever the script's name (it checks the source and its flags), so the executable,
// whose chunks are named after where it runs, uses it as it is.
const path = require('node:path');
const fs = require('node:fs');
const { createLoader } = require('../bin/load.cjs');

const [real, ...argv] = process.argv.slice(2);
const dist = '/opsctl-sea/dist';
const source = {
  read: (file) => fs.readFileSync(path.join(real, path.relative(dist, file)), 'utf8'),
  baked: () => undefined,
};
process.argv.splice(2, process.argv.length, ...argv);
const loader = createLoader(dist, process.env, source);
process.on('exit', loader.save);
loader.load(path.join(dist, 'cli.cjs')).run();
