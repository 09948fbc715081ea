import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let packageTexts: Array<{ file: string; text: string }> | undefined;
/** Every .ts file of src/ and of each package's src/ (read once). */
function allTexts(): Array<{ file: string; text: string }> {
  return (packageTexts ??= [
    ...srcTexts(),
    ...readdirSync(join(ROOT, 'packages')).flatMap((p) =>
      readdirSync(join(ROOT, 'packages', p, 'src'), { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.ts'))
        .map((f) => ({ file: `packages/${p}/src/${f.split('\\').join('/')}`, text: readFileSync(join(ROOT, 'packages', p, 'src', f), 'utf8') })),
    ),
  ]);
}

/** `file` of each import of SPECIFIER (static, re-export or import(); `import type` aside), read with TypeScript's parser in the files that name it. */
function importsOf(specifier: string, files = allTexts()): Array<{ file: string; kind: string }> {
  const named = files.filter((f) => f.text.includes(`'${specifier}'`) || f.text.includes(`"${specifier}"`));
  return named.flatMap((f) => {
    const sf = ts.createSourceFile(f.file, f.text, ts.ScriptTarget.Latest, false);
    const out: Array<{ file: string; kind: string }> = [];
    const visit = (n: ts.Node): void => {
      if (ts.isImportDeclaration(n) && ts.isStringLiteral(n.moduleSpecifier) && n.moduleSpecifier.text === specifier && !n.importClause?.isTypeOnly)
        out.push({ file: f.file, kind: 'static' });
      else if (ts.isExportDeclaration(n) && n.moduleSpecifier && ts.isStringLiteral(n.moduleSpecifier) && n.moduleSpecifier.text === specifier)
        out.push({ file: f.file, kind: 're-export' });
      else if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword) {
        const [arg] = n.arguments;
        if (arg && ts.isStringLiteralLike(arg) && arg.text === specifier) out.push({ file: f.file, kind: 'dynamic' });
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
    return out;
  });
}

let texts: Array<{ file: string; text: string }> | undefined;
/** Every .ts file of src/ as a path from the repository root and its text (read once). */
function srcTexts(): Array<{ file: string; text: string }> {
  return (texts ??= readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => ({ file: `src/${f.split('\\').join('/')}`, text: readFileSync(join(ROOT, 'src', f), 'utf8') })));
}

/** `file:line` of each line of TEXT that matches RE. */
function linesMatching(files: Array<{ file: string; text: string }>, re: RegExp): string[] {
  return files.flatMap((f) => f.text.split('\n').flatMap((line, i) => (re.test(line) ? [`${f.file}:${i + 1}`] : [])));
}

/**
 * One way per concern (issue 59): each of these has one home, and a second way of doing it is named
 * here by file and line.
 */
describe('one way per concern', () => {
  it('one YAML reader: the yaml library is loaded only by packages/shared/src/yaml.ts (src/core/yaml.ts for the CLI)', () => {
    const yaml = importsOf('yaml');
    // the simulated member is a program of its own (a bundle of its own, CommonJS in the single executable): it imports yaml statically
    const own = ['packages/shared/src/yaml.ts', 'packages/etcd-sim/src/args.ts'];
    expect(yaml.filter((i) => !own.includes(i.file)).map((i) => `${i.file} imports yaml (${i.kind})`)).toEqual([]);
    expect(yaml.map((i) => i.file)).toContain('packages/shared/src/yaml.ts');
    // and the CLI reaches it through core/yaml.ts, the mock through @opsctl/shared/yaml.js
    expect(importsOf('@opsctl/shared/yaml.js').map((i) => i.file)).toContain('src/core/yaml.ts');
    expect(importsOf('@opsctl/shared/yaml.js').some((i) => i.file.startsWith('packages/mock/'))).toBe(true);
    expect(importsOf('../../core/yaml.js').some((i) => i.file.startsWith('src/kv/'))).toBe(true);
    // and text becomes YAML data there only: parseYaml / parseYamlDocument (its limits, its words for a syntax error)
    const parsers = linesMatching(allTexts(), /\b(parseDocument|parseAllDocuments)\(|yamlLib\(\)\)?\.parse\(/);
    expect(parsers.filter((at) => !own.some((f) => at.startsWith(`${f}:`)))).toEqual([]);
  });

  /**
   * Sizes are read and said by @opsctl/shared/size.ts (parseSize, formatSize: binary units). The formatters of
   * their own still pending only shrink; kv/ops/simple.ts is etcdctl's words (go-humanize, SI: 20 kB), not ours.
   */
  it('one size syntax: sizes read and said by @opsctl/shared/size.ts (the pending formatters only shrink)', () => {
    const own = ['packages/shared/src/size.ts', 'src/kv/ops/simple.ts'];
    const pending = ['src/kv/backups/backups.ts'];
    // a number to one decimal said with a unit, or a list of units
    const said = linesMatching(allTexts(), /toFixed\([^)]*\)[^`]*\}\s*(B|KB|KiB|MiB|GiB|TiB|kB|MB|GB)\b|['"](KiB|MiB|kB|MB)['"]\s*,\s*['"](MiB|GiB|MB|GB)['"]/);
    const files = [...new Set(said.map((at) => at.replace(/:\d+$/, '')))].sort();
    expect(files.filter((f) => !own.includes(f) && !pending.includes(f))).toEqual([]);
    expect(pending.filter((f) => !files.includes(f)).map((f) => `${f}: no formatter of its own now; leave the list`)).toEqual([]);
    expect(files).toContain('packages/shared/src/size.ts');
    expect(linesMatching(allTexts(), /function parseSize\b/)).toEqual([expect.stringMatching(/^packages\/shared\/src\/size\.ts:/)]);
  });

  it('one lock: @opsctl/shared/lock.js is re-exported to the CLI by src/core/lock.ts alone', () => {
    expect(importsOf('@opsctl/shared/lock.js', srcTexts())).toEqual([{ file: 'src/core/lock.ts', kind: 're-export' }]);
  });

  it("the journals' folder and a cluster's journal path are built in kv/journal/journal.ts alone (journalsDir, journalPath)", () => {
    // the ladder's own record (its sub-room is being split, issue 59 item 1) still builds its folder's path: to go
    // and kv status, which looks for the folder before it loads any journal code (its start-up budget: kv-startup e2e)
    const pending = ['src/kv/ladder/record.ts', 'src/commands/kv/status.ts'];
    const built = linesMatching(srcTexts(), /['"]journals['"]/).filter((at) => !pending.some((p) => at.startsWith(`${p}:`)));
    expect(built.map((at) => at.replace(/:\d+$/, ''))).toEqual(['src/kv/journal/journal.ts']);
  });

  it('the journal is read only through its validated reader (kv/journal/read.ts): no file casts parsed JSON to a Journal', () => {
    const casts = linesMatching(srcTexts(), /\bas\s+(Journal|JournalRecord)\b/).filter((at) => !at.startsWith('src/kv/journal/read.ts:'));
    expect(casts).toEqual([]);
    const raw = srcTexts().filter((f) => /memberInFlight|memberMayBeDown|isResumable/.test(f.text) && /JSON\.parse\(/.test(f.text));
    expect(raw.map((f) => f.file)).toEqual([]);
  });

  /**
   * The ways opsctl makes an HTTP request, each for a reason, and no seventh: core/http.ts (the one client: retries,
   * deadlines, pacing, redaction; undici through core/undici-lite.ts), kv's gateway client on core/wire-transport.ts
   * (answers read whole) and core/node-transport.ts (streams: a watch, a snapshot) through kv/cluster/session.ts, as
   * etcd's own gRPC-gateway client keeps a transport of its own, and the S3 SDK (kv/offsite: request signing, checksums,
   * multipart). The sign-in's auto-consent and the release download go through core/http too (no global fetch).
   */
  it('HTTP requests go through the listed ways only', () => {
    const files = srcTexts();
    const ways = new Map<string, string[]>();
    const add = (way: string, file: string) => ways.set(way, [...(ways.get(way) ?? []), file].sort());
    for (const f of files) {
      const sf = ts.createSourceFile(f.file, f.text, ts.ScriptTarget.Latest, false);
      const visit = (n: ts.Node): void => {
        if (ts.isCallExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === 'fetch') add('global fetch', f.file);
        const spec =
          ts.isImportDeclaration(n) && !n.importClause?.isTypeOnly && ts.isStringLiteral(n.moduleSpecifier)
            ? n.moduleSpecifier.text
            : ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword && n.arguments[0] && ts.isStringLiteralLike(n.arguments[0])
              ? n.arguments[0].text
              : undefined;
        if (spec !== undefined) {
          if (/^undici(\/|$)/.test(spec)) add('undici', f.file);
          if (/(^|\/)undici-lite\.js$/.test(spec)) add('undici-lite', f.file);
          if (/(^|\/)(wire|node)-transport\.js$/.test(spec) && !f.file.startsWith('src/core/')) add('kv transports', f.file);
          if (/^@aws-sdk\//.test(spec)) add('S3 SDK', f.file);
        }
        ts.forEachChild(n, visit);
      };
      visit(sf);
    }
    expect(Object.fromEntries([...ways].map(([w, fs]) => [w, [...new Set(fs)]]))).toEqual({
      // the one client's transport, loaded on first use (and the tracker upload's FormData: a body, not a request)
      undici: ['src/commands/tracker/upload.ts', 'src/core/undici-lite.ts'],
      'undici-lite': ['src/core/http.ts'],
      'kv transports': ['src/kv/cluster/session.ts'],
      'S3 SDK': ['src/kv/offsite/store.ts'],
    });
  });
});
