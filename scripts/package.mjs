// `npm run package`: the two ways to install opsctl.
//   out/opsctl             one executable for this platform (a Node single executable application:
//                          the whole CLI bundled as one CommonJS script, its V8 code cache, injected
//                          into a copy of this node with postject); runs on a host without node.
//   out/opsctl-<version>.tgz  the npm package (npm pack): `npm install -g ./out/opsctl-<version>.tgz`.
// Both go to out/, not dist/: dist/ is what the npm package holds (and what npm's prepare rebuilds).
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { builtinImportsAsRequire, noHttp2 } from './esbuild-plugins.mjs';

const out = 'out/sea';
const version = JSON.parse(readFileSync('package.json', 'utf8')).version;
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

await build({
  entryPoints: { opsctl: 'src/sea.ts' },
  outdir: out,
  bundle: true,
  format: 'cjs', // a single executable's main script is CommonJS and may require only built-in modules
  platform: 'node',
  target: 'node20',
  // the keyring binding is a native addon the executable cannot carry: there the credential file is used, said once
  external: ['playwright-core', 'fsevents', '@napi-rs/keyring'],
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
  plugins: [noHttp2, builtinImportsAsRequire],
  // import.meta.dirname is used only to find dist/kv-member.cjs, which the executable replaces by itself;
  // `open` looks for its own xdg-open beside its package file: with no URL it uses the system's
  define: {
    __OPSCTL_VERSION__: JSON.stringify(version),
    __OPSCTL_SEA__: 'true',
    'import.meta.dirname': '__dirname',
    'import.meta.url': 'undefined',
  },
});

const blob = join(out, 'opsctl.blob');
writeFileSync(
  join(out, 'sea-config.json'),
  JSON.stringify({ main: join(out, 'opsctl.js'), output: blob, disableExperimentalSEAWarning: true, useCodeCache: true }, null, 2),
);
execFileSync(process.execPath, ['--experimental-sea-config', join(out, 'sea-config.json')], { stdio: 'inherit' });

const exe = 'out/opsctl';
copyFileSync(process.execPath, exe);
chmodSync(exe, 0o755);
execFileSync(
  process.execPath,
  [join('node_modules', 'postject', 'dist', 'cli.js'), exe, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2'],
  { stdio: ['ignore', 'pipe', 'pipe'] }, // postject's ELF notes warnings are noise; a failure still throws with them
);
console.log(
  `out/opsctl: ${(statSync(exe).size / 1e6).toFixed(1)} MB (node ${process.version} + ${(statSync(blob).size / 1e6).toFixed(1)} MB of CLI and code cache)`,
);

// The npm package is packed from a staging copy whose package.json has no scripts and no development
// dependencies: dist/ is built already, and a `prepare` (this repository's build) in the published
// package.json would only make npm warn about install scripts when the tarball is installed.
const stage = 'out/npm';
rmSync(stage, { recursive: true, force: true });
mkdirSync(stage, { recursive: true });
const manifest = JSON.parse(readFileSync('package.json', 'utf8'));
delete manifest.scripts;
delete manifest.devDependencies;
writeFileSync(join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
for (const entry of [...manifest.files, 'README.md']) cpSync(entry, join(stage, entry), { recursive: true });
const tgz = execFileSync('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', '..'], { cwd: stage, encoding: 'utf8' })
  .trim()
  .split('\n')
  .pop();
rmSync(stage, { recursive: true, force: true });
console.log(`out/${tgz}: the npm package (npm install -g ./out/${tgz})`);
