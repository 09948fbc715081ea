// `npm run package`: the two ways to install opsctl.
//   out/opsctl             one executable for this platform (a Node single executable application:
//                          dist/'s chunks as assets with the code V8 compiled them to, loaded by
//                          bin/sea.cjs as bin/load.cjs loads them from disk, injected into a copy of
//                          this node with postject); runs on a host without node.
//   out/opsctl-<version>.tgz  the npm package (npm pack): `npm install -g ./out/opsctl-<version>.tgz`.
// Both go to out/, not dist/: dist/ is what the npm package holds (and what npm's prepare rebuilds).
// Atomic: everything is made in .out-build-<pid>-* beside out/, and each finished file is renamed into
// out/ (one rename: an out/opsctl running meanwhile keeps its file, a new one runs the new file; copying
// over a running executable would fail with ETXTBSY, and a half-written one would not run at all).
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { seaBlob } from './sea-blob.mjs';

const stage = mkdtempSync(`.out-build-${process.pid}-`);
const out = join(stage, 'sea');
const version = JSON.parse(readFileSync('package.json', 'utf8')).version;
mkdirSync(out, { recursive: true });
try {
  // the blob: the main script, dist/ as assets, the code compiled at package time (scripts/sea-blob.mjs)
  const blob = await seaBlob('dist', out);

  const exe = join(stage, 'opsctl');
  copyFileSync(process.execPath, exe);
  chmodSync(exe, 0o755);
  execFileSync(
    process.execPath,
    [join('node_modules', 'postject', 'dist', 'cli.js'), exe, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2'],
    { stdio: ['ignore', 'pipe', 'pipe'] }, // postject's ELF notes warnings are noise; a failure still throws with them
  );
  const exeMb = (statSync(exe).size / 1e6).toFixed(1);
  const blobMb = (statSync(blob).size / 1e6).toFixed(1);

  // The npm package is packed from a staging copy whose package.json has no scripts and no development
  // dependencies: dist/ is built already, and a `prepare` (this repository's build) in the published
  // package.json would only make npm warn about install scripts when the tarball is installed.
  const npmStage = join(stage, 'npm');
  mkdirSync(npmStage, { recursive: true });
  const manifest = JSON.parse(readFileSync('package.json', 'utf8'));
  delete manifest.scripts;
  delete manifest.devDependencies;
  // the workspace packages (packages/mock, packages/shared) are bundled into dist/: nothing to link at install
  delete manifest.workspaces;
  writeFileSync(join(npmStage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  for (const entry of [...manifest.files, 'README.md']) cpSync(entry, join(npmStage, entry), { recursive: true });
  const tgz = execFileSync('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', '..'], { cwd: npmStage, encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop();

  // both made: each renamed into out/ (the same file system), the executable first
  mkdirSync('out', { recursive: true });
  renameSync(exe, 'out/opsctl');
  renameSync(join(stage, tgz), join('out', tgz));
  console.log(`out/opsctl: ${exeMb} MB (node ${process.version} + ${blobMb} MB of CLI and code cache)`);
  console.log(`out/${tgz}: the npm package (npm install -g ./out/${tgz})`);
} finally {
  rmSync(stage, { recursive: true, force: true });
}
