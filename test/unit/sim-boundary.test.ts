import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The sandbox driver's side of the simulator: the one file that imports packages/etcd-sim and reads
 * a sandbox's kind. The local driver (src/kv/drivers/local.ts) starts members through the program it
 * chooses; every other kv flow asks the driver (MemberDriver.capabilities, etcdFromDir).
 */
const SANDBOX_MEMBERS = 'src/kv/sandbox/members.ts';

/** Every .ts file under src/, as a path from the repository root and its text. */
function srcFiles(dir = join(ROOT, 'src')): Array<{ file: string; text: string }> {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const abs = join(dir, e.name);
    if (e.isDirectory()) return srcFiles(abs);
    return e.name.endsWith('.ts') ? [{ file: relative(ROOT, abs).split(sep).join('/'), text: readFileSync(abs, 'utf8') }] : [];
  });
}

/** Whether a specifier written in `file` leads into the simulator's package (by name, or by a relative path into packages/etcd-sim). */
function intoSim(specifier: string): boolean {
  return /^@opsctl\/etcd-sim(\/|$)/.test(specifier) || /(^|\/)packages\/etcd-sim(\/|$)/.test(specifier);
}

/** The receiver of a `.kind` read names a sandbox: `sandbox.kind`, `o.cluster.sandbox?.kind`, `this.sandbox.kind`. */
const SANDBOX_RECEIVER = /(^|\.)sandbox$/i;

/**
 * What in TEXT reaches the simulator or branches on a sandbox's kind, as `file:line: what`: imports of
 * @opsctl/etcd-sim (static, type-only, re-exports, import()), reads of a sandbox's `kind`, a `kind`
 * destructured from a sandbox, and any comparison with the kind's value 'sim'.
 */
export function simLeaks(text: string, file: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const at = (n: ts.Node, what: string) => out.push(`${file}:${sf.getLineAndCharacterOfPosition(n.getStart()).line + 1}: ${what}`);
  const isSim = (n: ts.Node) => ts.isStringLiteralLike(n) && n.text === 'sim';
  const visit = (n: ts.Node) => {
    if ((ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) && n.moduleSpecifier && ts.isStringLiteral(n.moduleSpecifier)) {
      if (intoSim(n.moduleSpecifier.text)) at(n, `imports ${n.moduleSpecifier.text}`);
    } else if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = n.arguments;
      if (arg && ts.isStringLiteralLike(arg) && intoSim(arg.text)) at(n, `imports ${arg.text}`);
    } else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument) && ts.isStringLiteral(n.argument.literal) && intoSim(n.argument.literal.text)) {
      at(n, `imports ${n.argument.literal.text}`);
    } else if (ts.isPropertyAccessExpression(n) && n.name.text === 'kind' && SANDBOX_RECEIVER.test(n.expression.getText().replace(/\?$/, ''))) {
      at(n, `reads ${n.getText()}`);
    } else if (ts.isVariableDeclaration(n) && ts.isObjectBindingPattern(n.name) && n.initializer && SANDBOX_RECEIVER.test(n.initializer.getText())) {
      if (n.name.elements.some((e) => (e.propertyName ?? e.name).getText() === 'kind')) at(n, `reads the kind of ${n.initializer.getText()}`);
    } else if (
      ts.isBinaryExpression(n) &&
      [
        ts.SyntaxKind.EqualsEqualsEqualsToken,
        ts.SyntaxKind.ExclamationEqualsEqualsToken,
        ts.SyntaxKind.EqualsEqualsToken,
        ts.SyntaxKind.ExclamationEqualsToken,
      ].includes(n.operatorToken.kind)
    ) {
      if (isSim(n.left) || isSim(n.right)) at(n, `compares ${n.getText()}`);
    } else if (ts.isCaseClause(n) && isSim(n.expression)) at(n, `compares case 'sim'`);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/** The names by which a flow once told simulated members from etcd (the driver's answers replace them: ProgramCapabilities). */
const SIM_NAMES = new Set(['builtIn', 'simulated', 'isSimulated', 'sim']);
/** The simulator's command line: its flag and the single executable's entry word (the program's own name aside). */
const SIM_WORDS = /kv-version|__kv-member|kv-member[^/]*\.c?js/;
/** Text that may hold a recognition (only such files are parsed). */
const MAYBE_SIM = /builtIn|simulated|isSimulated|\bsim\b|kv-version|kv-member/;

/**
 * What in TEXT recognises the simulator by name, flag or command line, as `file:line: what`: a property or
 * binding named as the simulator (`.builtIn`, `simulated: true`, `{ simulated }`), a string, template or
 * regular expression holding its command line's words, and a comparison with the words 'simulated' or 'sim'.
 * (Messages that say "simulated members" are words, not a branch: not counted.)
 */
export function simRecognitions(text: string, file: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const at = (n: ts.Node, what: string) => out.push(`${file}:${sf.getLineAndCharacterOfPosition(n.getStart()).line + 1}: ${what}`);
  const named = (n: ts.Node | undefined) =>
    n !== undefined && (ts.isIdentifier(n) || ts.isStringLiteral(n) || ts.isPrivateIdentifier(n)) && SIM_NAMES.has(n.text);
  const visit = (n: ts.Node) => {
    if (ts.isPropertyAccessExpression(n) && named(n.name)) at(n, `reads ${n.getText()}`);
    else if ((ts.isPropertyAssignment(n) || ts.isShorthandPropertyAssignment(n) || ts.isPropertySignature(n) || ts.isPropertyDeclaration(n)) && named(n.name))
      at(n, `names ${n.name.getText()}`);
    else if ((ts.isGetAccessorDeclaration(n) || ts.isMethodDeclaration(n) || ts.isMethodSignature(n)) && named(n.name)) at(n, `names ${n.name.getText()}`);
    else if (ts.isBindingElement(n) && (named(n.propertyName) || (!n.propertyName && named(n.name)))) at(n, `binds ${n.getText()}`);
    else if (
      (ts.isStringLiteralLike(n) || ts.isRegularExpressionLiteral(n) || ts.isTemplateHead(n) || ts.isTemplateMiddle(n) || ts.isTemplateTail(n)) &&
      SIM_WORDS.test(n.getText())
    )
      at(n, `holds the command line's ${SIM_WORDS.exec(n.getText())![0]}`);
    else if (
      ts.isBinaryExpression(n) &&
      [
        ts.SyntaxKind.EqualsEqualsEqualsToken,
        ts.SyntaxKind.ExclamationEqualsEqualsToken,
        ts.SyntaxKind.EqualsEqualsToken,
        ts.SyntaxKind.ExclamationEqualsToken,
      ].includes(n.operatorToken.kind) &&
      [n.left, n.right].some((x) => ts.isStringLiteralLike(x) && (x.text === 'simulated' || x.text === 'sim'))
    )
      at(n, `compares ${n.getText()}`);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/** Text that may hold a leak (each kind simLeaks finds has one of these words); only such files are parsed. */
const MAYBE = /etcd-sim|sandbox\??\.kind|\{[^}]*\bkind\b[^}]*\}\s*=[^;\n]*sandbox|['"]sim['"]/;

/** The leaks of every file of src/ but the sandbox driver's own (files without the words are not parsed). */
function leaksOutsideSandbox(files: Array<{ file: string; text: string }>): string[] {
  return files.filter((f) => f.file !== SANDBOX_MEMBERS && MAYBE.test(f.text)).flatMap((f) => simLeaks(f.text, f.file));
}

/**
 * The simulator is a package of its own (packages/etcd-sim), reached only through the sandbox driver
 * (issue 46), as the mock is reached only through the wiring: no kv flow, verb or other driver imports
 * it or asks which kind of sandbox it runs on; each asks the driver the question it has (the releases
 * of its own program, no etcd data, a binary directory every start needs).
 */
describe('the simulator behind the sandbox driver', () => {
  it('finds each way of reaching it or branching on the kind (the check itself works)', () => {
    const text = [
      "import { SIM_RELEASES } from '@opsctl/etcd-sim/releases.js';",
      "import type { X } from '../../../packages/etcd-sim/src/member.js';",
      "export { simulatedAt } from '@opsctl/etcd-sim/program.js';",
      "const p = () => import('@opsctl/etcd-sim/program.js');",
      "if (o.cluster.sandbox?.kind === 'etcd') f();",
      'const real = this.sandbox.kind;',
      'const { kind } = cluster.sandbox;',
      "if (spec.kind !== 'sim') g();",
      "switch (k) { case 'sim': break; }",
      // not the simulator: another package, another kind, the word in a message, the type of the record
      "import { x } from '@opsctl/etcd-simulated';",
      "if (snap.kind === 'etcd') h();",
      "const msg = 'sim members';",
      "type K = { kind: 'sim' | 'etcd' };",
    ].join('\n');
    // the quick look before parsing lets each of them through
    for (const line of text.split('\n').slice(0, 9)) expect(MAYBE.test(line), line).toBe(true);
    expect(simLeaks(text, 'x.ts').map((l) => l.replace(/: .*$/, ''))).toEqual([
      'x.ts:1',
      'x.ts:2',
      'x.ts:3',
      'x.ts:4',
      'x.ts:5',
      'x.ts:6',
      'x.ts:7',
      'x.ts:8',
      'x.ts:9',
    ]);
  });

  it('finds each recognition by name, flag or command line (the check itself works)', () => {
    const text = [
      'if (o.driver?.builtIn) f();',
      'const r = { simulated: true };',
      'if (s.simulated) g();',
      "if (s.program.some((w) => w === '--kv-version' || w === '__kv-member')) h();",
      'const flags = /^--?(name|kv-version)(=|$)/;',
      "if (snap.kind === 'simulated') i();",
      'const { builtIn } = driver;',
      'interface X { simulated?: boolean }',
      'const p = `${node} kv-member.cjs`;',
      // not a recognition: the driver's answers, and words in a message
      'if (!capabilitiesOf(d).etcdData) j();',
      "const msg = 'simulated members keep no WAL';",
      "if (snap.kind !== 'etcd') k();",
    ].join('\n');
    expect(simRecognitions(text, 'x.ts').map((l) => l.replace(/: .*$/, ''))).toEqual([
      'x.ts:1',
      'x.ts:2',
      'x.ts:3',
      'x.ts:4',
      'x.ts:4',
      'x.ts:5',
      'x.ts:6',
      'x.ts:7',
      'x.ts:8',
      'x.ts:9',
    ]);
  });

  it('no kv file but the sandbox driver recognises the simulator by name, flag or command line (none allowed, the ladder included)', () => {
    // the kv files: the domain (src/kv) and its verbs (src/commands/kv); help texts elsewhere may name the program's file
    const kv = srcFiles().filter((f) => /^src\/(kv|commands\/kv)\//.test(f.file));
    expect(kv.length).toBeGreaterThan(150);
    const files = kv.filter((f) => f.file !== SANDBOX_MEMBERS && MAYBE_SIM.test(f.text));
    expect(files.flatMap((f) => simRecognitions(f.text, f.file))).toEqual([]);
    // the sandbox driver's side does answer for the simulator (the rule is not met by reading nothing)
    const own = srcFiles().find((f) => f.file === SANDBOX_MEMBERS)!;
    expect(simRecognitions(own.text, own.file).length).toBeGreaterThan(0);
    expect(own.text).toMatch(/capabilities: SIMULATED/);
  });

  it('outside src/kv/sandbox/members.ts: 0 imports of @opsctl/etcd-sim and 0 branches on a sandbox kind in src/', () => {
    const files = srcFiles();
    expect(files.some((f) => f.file === 'src/kv/drivers/local.ts')).toBe(true);
    expect(leaksOutsideSandbox(files)).toEqual([]);
    // the sandbox driver's side does reach it (the rule is not met by reading nothing)
    const own = files.find((f) => f.file === SANDBOX_MEMBERS)!;
    expect(simLeaks(own.text, own.file).join('\n')).toMatch(/imports @opsctl\/etcd-sim\/releases\.js[\s\S]*compares spec\.kind === 'sim'/);
  });
});
