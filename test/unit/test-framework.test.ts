import { readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tsFiles } from '../helpers/ts-files.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * One way to bring up a cluster in a test (issue 59 item 5): startCluster from test/framework (docs/development.md,
 * "A cluster in a test"). A test file brings one up only through test/framework/index.ts: never the old helpers'
 * paths (test/helpers/etcd-cluster.ts: a re-export of the real backend for the kv-etcd bench), nor kvSandbox/upSandbox,
 * nor a backend file of the framework, nor `kv sandbox up` run by hand, unless the command is the file's subject
 * (SUBJECT).
 */
const OLD = [
  { what: 'imports test/helpers/etcd-cluster', re: /from '[./]*\/?(?:helpers\/)?etcd-cluster\.js'/ },
  { what: 'imports test/helpers/etcd-containers', re: /from '[./]*\/?(?:helpers\/)?etcd-containers\.js'/ },
  { what: 'imports kvSandbox or upSandbox', re: /import \{[^}]*\b(?:kvSandbox|upSandbox)\b[^}]*\} from '[^']*helpers\/kv\.js'/ },
  { what: "imports a framework backend instead of test/framework's index", re: /from '[^']*framework\/(?:real|container|simulated|start|cluster)\.js'/ },
  { what: 'runs `kv sandbox up` by hand', re: /'sandbox',\s*'up'/ },
];

/**
 * Files whose subject is `opsctl kv sandbox up` itself: they run it (or complete its words) for that subject, and the
 * framework for anything else.
 */
const SUBJECT = new Set([
  'test/integration/completions.test.ts',
  'test/integration/kv-sandbox-config.test.ts',
  'test/integration/kv-sandbox-ports.test.ts',
  // kv sandbox up SIGKILLed across its members' start window (its other cases' sandboxes come up through startCluster)
  'test/e2e/kv-orphan-start.test.ts',
  // the single executable's own kv sandbox up on a host with no node (its members are the executable itself)
  'test/e2e/package.test.ts',
]);

/** Every test file and helper under test/ outside the framework and the old helpers themselves, with what it does of OLD. */
function offenders(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const own = new Set(['test/helpers/etcd-cluster.ts', 'test/helpers/kv.ts', 'test/unit/test-framework.test.ts']);
  for (const abs of tsFiles(join(ROOT, 'test'))) {
    const file = relative(ROOT, abs).split(sep).join('/');
    if (file.startsWith('test/framework/') || own.has(file)) continue;
    const text = readFileSync(abs, 'utf8');
    const found = OLD.filter((o) => o.re.test(text) && !(SUBJECT.has(file) && o.what.startsWith('runs'))).map((o) => o.what);
    if (found.length) out.set(file, found);
  }
  return out;
}

describe('clusters in tests come up through test/framework', () => {
  it('no file brings one up another way', () => {
    const bad = [...offenders()].map(([f, what]) => `${f}: ${what.join('; ')}`);
    expect(bad, 'use startCluster from test/framework/index.js (docs/development.md, "A cluster in a test")').toEqual([]);
  });
});
