// `npm run gen:kv-index [-- --check]`: writes src/commands/kv/verb-index.ts from the kv noun (src/commands/kv/noun.ts),
// bundled from src/ with esbuild (the CLI's own settings) and run here; with --check, exits 1 when the file is stale.
// Each verb's spec must be the `spec` of its own module, named by its command words (`kv endpoint health`:
// endpoint-health.spec.ts), and every *.spec.ts of the noun a verb of it: the index loads a verb's spec by that name.
import { build } from 'esbuild';
import { createRequire } from 'node:module';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { KV_INDEX_FILE, kvIndexSource, specFile, verbsOf } from './kv-index.mjs';

const KV = 'src/commands/kv';
const files = readdirSync(KV).filter((f) => f.endsWith('.spec.ts'));
const dir = mkdtempSync(join(tmpdir(), 'opsctl-kv-index-'));
let text;
try {
  // the noun and every spec module, in one bundle: a verb of the noun is its module's spec (or a copy of it, withCommandTimeout's)
  const entry = [
    `export { noun } from ${JSON.stringify(resolve(KV, 'noun.ts'))};`,
    `export { NOUN_SUMMARIES } from ${JSON.stringify(resolve('src/commands/nouns.ts'))};`,
    ...files.map((f, i) => `export { spec as s${i} } from ${JSON.stringify(resolve(KV, f))};`),
  ].join('\n');
  await build({
    stdin: { contents: entry, resolveDir: process.cwd(), loader: 'ts' },
    outfile: join(dir, 'kv-noun.cjs'),
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    external: ['playwright-core', 'fsevents', '@napi-rs/keyring'],
    logLevel: 'warning',
    define: {
      __OPSCTL_VERSION__: JSON.stringify(JSON.parse(readFileSync('package.json', 'utf8')).version),
      'import.meta.dirname': '__dirname',
      'import.meta.url': 'undefined',
    },
  });
  const mod = createRequire(import.meta.url)(join(dir, 'kv-noun.cjs'));
  const specs = new Map(files.map((f, i) => [f, mod[`s${i}`]]));
  const problems = [];
  const verbs = verbsOf(mod.noun);
  for (const [words, verb] of verbs) {
    const spec = specs.get(specFile(words));
    if (!spec) problems.push(`kv ${words.join(' ')}: no ${KV}/${specFile(words)}`);
    else if (spec.name !== verb.name || spec.summary !== verb.summary || spec.flags !== verb.flags)
      problems.push(`kv ${words.join(' ')}: not the spec of ${KV}/${specFile(words)}`);
  }
  const named = new Set(verbs.map(([words]) => specFile(words)));
  for (const f of files) if (!named.has(f)) problems.push(`${KV}/${f}: the spec of no verb of the kv noun (noun.ts)`);
  if (problems.length) {
    console.error(problems.join('\n'));
    process.exit(1);
  }
  text = await kvIndexSource(mod.noun, mod.NOUN_SUMMARIES.kv);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

if (process.argv.includes('--check')) {
  let now = '';
  try {
    now = readFileSync(KV_INDEX_FILE, 'utf8');
  } catch {
    // missing: stale
  }
  if (now !== text) {
    console.error(`stale: ${KV_INDEX_FILE}; run npm run gen:kv-index and commit the result`);
    process.exit(1);
  }
} else {
  writeFileSync(KV_INDEX_FILE, text);
  console.log(`wrote ${KV_INDEX_FILE}: ${files.length} verbs`);
}
