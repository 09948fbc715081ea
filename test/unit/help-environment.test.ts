import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ENVIRONMENT } from '../../src/commands/help/help.js';
import { SERVICES } from '../../src/config/services.js';
import { ExitCode, exitCodeHelp } from '../../src/core/exit-codes.js';
import { tsFiles } from '../helpers/ts-files.js';

/**
 * `opsctl help environment` and `opsctl help exit-codes` are the user's reference: they must match the
 * code. Every environment variable the sources read is listed, and every listed one is read.
 */
const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** Variables set for child processes (etcdctl, kv members), not read for opsctl's own behaviour. */
const WRITTEN_FOR_CHILDREN = new Set(['ETCDCTL_API', 'PATH']);

/**
 * The platform's config and data directories (src/config/paths.ts writes env-paths' rule for them, which env-paths,
 * a dependency outside this scan, used to read): the topic names them as that rule, under HOME ("the config and data
 * directories follow the platform: env-paths"), not one by one.
 */
const PLATFORM_DIRS = new Set(['XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'APPDATA', 'LOCALAPPDATA']);

/** No test hook is read by the product: none is left out. */
const TEST_ONLY = new Set<string>();

/** The launcher and its chunk loader (bin/*.cjs) read variables too. */
const BIN_DIR = fileURLToPath(new URL('../../bin/', import.meta.url));

function variablesRead(): Set<string> {
  const found = new Set<string>();
  const launcher = readdirSync(BIN_DIR)
    .filter((f) => f.endsWith('.cjs'))
    .map((f) => join(BIN_DIR, f));
  // The help topic itself names every variable: it is the list under test, not a reader.
  for (const file of [...launcher, ...tsFiles(SRC).filter((f) => !f.endsWith(join('commands', 'help', 'topic.ts')))]) {
    const text = readFileSync(file, 'utf8');
    // OPSCTL_* anywhere (env.X, env['X'], messages naming a variable); not the build define __OPSCTL_VERSION__.
    for (const m of text.matchAll(/(?<![A-Za-z0-9_])OPSCTL_[A-Z0-9_]*[A-Z0-9]/g)) found.add(m[0]);
    // etcdctl's own variables, named anywhere (the kv verbs honour ETCDCTL_ENDPOINTS and its family)
    for (const m of text.matchAll(/(?<![A-Za-z0-9_])ETCDCTL_[A-Z0-9_]*[A-Z0-9]/g)) found.add(m[0]);
    // Any other upper-case variable read from an env object: env.X / env['X'].
    for (const m of text.matchAll(/\benv(?:\.([A-Z][A-Z0-9_]*)|\[['"]([A-Z][A-Z0-9_]*)['"]\])/g)) found.add(m[1] ?? m[2]!);
    // OPSCTL_${service.toUpperCase()}_URL: one variable per service.
    if (text.includes('`OPSCTL_${service.toUpperCase()}_URL`')) for (const s of SERVICES) found.add(`OPSCTL_${s.toUpperCase()}_URL`);
    // OPSCTL_${key.toUpperCase()} for the endpoints set by hand (src/auth/settings.ts).
    const byHand = text.match(/key: ((?:'[a-z_]+' \| )*'[a-z_]+'),?\s*\): string \| undefined \{[^}]*?`OPSCTL_\$\{key\.toUpperCase\(\)\}`/);
    if (byHand) for (const k of byHand[1]!.matchAll(/'([a-z_]+)'/g)) found.add(`OPSCTL_${k[1]!.toUpperCase()}`);
  }
  for (const name of [...WRITTEN_FOR_CHILDREN, ...TEST_ONLY, ...PLATFORM_DIRS]) found.delete(name);
  return found;
}

function variablesListed(): Set<string> {
  const listed = new Set<string>();
  for (const [names] of ENVIRONMENT) {
    for (const raw of names.split(',')) {
      const name = raw.trim().replace(/=.*$/, '');
      if (name === 'OPSCTL_<SERVICE>_URL') for (const s of SERVICES) listed.add(`OPSCTL_${s.toUpperCase()}_URL`);
      else listed.add(name);
    }
  }
  return listed;
}

describe('opsctl help environment', () => {
  it('lists every variable the sources read, and none they do not', () => {
    const read = [...variablesRead()].sort();
    const listed = [...variablesListed()].sort();
    // Sanity: the scan does find the variables (an empty scan would make the comparison vacuous).
    expect(read).toEqual(expect.arrayContaining(['OPSCTL_CONFIG_DIR', 'OPSCTL_TRACKER_URL', 'OPSCTL_TOKEN_URL', 'CI', 'NO_COLOR']));
    expect(
      read.filter((v) => !listed.includes(v)),
      'read in src/ but missing from help environment',
    ).toEqual([]);
    expect(
      listed.filter((v) => !read.includes(v)),
      'listed by help environment but read nowhere in src/',
    ).toEqual([]);
  });
});

describe('opsctl help exit-codes', () => {
  it('lists exactly the exit codes the code uses, under their names', () => {
    expect(exitCodeHelp.map(([code, name]) => [name, code])).toEqual(Object.entries(ExitCode));
  });

  it('matches the README table', () => {
    const readme = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');
    const section = readme.slice(readme.indexOf('## Output and exit codes'));
    const codes = [...section.slice(0, section.indexOf('\n## ', 5)).matchAll(/^\| (\d+) \|/gm)].map((m) => Number(m[1]));
    expect(codes).toEqual(exitCodeHelp.map(([code]) => code));
  });
});
