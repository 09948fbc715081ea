import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** `process.env` itself, or `process.env.X` / `process.env[X]`. */
function isEnv(n: ts.Node): boolean {
  const bare = (x: ts.Node) => ts.isPropertyAccessExpression(x) && x.name.text === 'env' && ts.isIdentifier(x.expression) && x.expression.text === 'process';
  if (bare(n)) return true;
  return (ts.isPropertyAccessExpression(n) || ts.isElementAccessExpression(n)) && bare(n.expression);
}

const ASSIGN = new Set([
  ts.SyntaxKind.EqualsToken,
  ts.SyntaxKind.QuestionQuestionEqualsToken,
  ts.SyntaxKind.BarBarEqualsToken,
  ts.SyntaxKind.AmpersandAmpersandEqualsToken,
  ts.SyntaxKind.PlusEqualsToken,
]);

/** The function a node is in (its name: a declaration's, or the variable's a function expression is given to), '' at the top. */
function enclosingFunction(n: ts.Node): string {
  for (let p = n.parent; p; p = p.parent) {
    if ((ts.isFunctionDeclaration(p) || ts.isMethodDeclaration(p)) && p.name) return p.name.getText();
    if ((ts.isArrowFunction(p) || ts.isFunctionExpression(p)) && ts.isVariableDeclaration(p.parent)) return p.parent.name.getText();
  }
  return '';
}

/**
 * Every place TEXT changes process-wide state: writes to process.env (assignment, delete, Object.assign)
 * and V8 flags, each as `file:line: code`, with ` (in NAME)` when it is inside the function NAME.
 */
export function processStateWrites(text: string, name = 'x.ts'): string[] {
  const sf = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const at = (n: ts.Node, what: string) => {
    const fn = enclosingFunction(n);
    found.push(`${name}:${sf.getLineAndCharacterOfPosition(n.getStart()).line + 1}: ${what}${fn ? ` (in ${fn})` : ''}`);
  };
  const visit = (n: ts.Node) => {
    if (ts.isBinaryExpression(n) && ASSIGN.has(n.operatorToken.kind) && isEnv(n.left)) at(n, n.getText());
    if (ts.isDeleteExpression(n) && isEnv(n.expression)) at(n, n.getText());
    if (ts.isCallExpression(n)) {
      const callee = n.expression.getText();
      if (/(^|\.)setFlagsFromString$/.test(callee)) at(n, n.getText());
      if (callee === 'Object.assign' && n.arguments[0] && isEnv(n.arguments[0])) at(n, n.getText());
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return found;
}

/** The entry point: the one function allowed to change the process it runs in (bin/opsctl.cjs and bin/sea.cjs call it). */
const ENTRY = { file: 'src/cli.ts', fn: 'run' };

/** The writes of every .ts under the repository's `dirs`, the entry point's own left out. */
function writesOutsideEntry(dirs: string[]): { outside: string[]; entry: string[] } {
  const all = dirs.flatMap((d) =>
    files(join(ROOT, d)).flatMap((f) => {
      const text = readFileSync(f, 'utf8');
      // parsed only where the words appear (parsing every file is most of this test's time otherwise)
      return /process\.env|setFlagsFromString/.test(text) ? processStateWrites(text, relative(ROOT, f).split(sep).join('/')) : [];
    }),
  );
  return splitEntry(all);
}

/** The writes inside the entry point's function, and the rest. */
function splitEntry(writes: string[]): { outside: string[]; entry: string[] } {
  const inEntry = (w: string) => w.startsWith(`${ENTRY.file}:`) && w.endsWith(` (in ${ENTRY.fn})`);
  return { outside: writes.filter((w) => !inEntry(w)), entry: writes.filter(inEntry) };
}

/**
 * Library code never changes the process it runs in (issue 46): no write to process.env and no V8 flag
 * anywhere under src/ or a package's src/ but the entry point, src/cli.ts's run(). The AWS profile goes
 * to the S3 client as a setting; the SDK's notice, the young generation of an s3:// upload and
 * WebAssembly's Liftoff-only compile are the entry point's (core/wasm.ts asks it, when a module is about
 * to compile some, to apply its choice).
 */
describe('no process-wide state changed outside the entry point', () => {
  it('finds the writes it looks for, and the function each is in (the check itself works)', () => {
    const text = [
      "process.env.AWS_PROFILE = 'x';",
      "process.env['A'] ??= '1';",
      'delete process.env.B;',
      'Object.assign(process.env, { C: 1 });',
      "v8.setFlagsFromString('--x');",
      "setFlagsFromString('--y');",
      'const read = process.env.D ?? process.env["E"];',
      'if (process.env.F === "1") {}',
      "export async function run() { process.env.G ??= 'x'; }",
      "const later = () => process.getBuiltinModule('node:v8').setFlagsFromString('--z');",
    ].join('\n');
    expect(processStateWrites(text).map((l) => l.replace(/: .*?( \(in \w+\))?$/, '$1'))).toEqual([
      'x.ts:1',
      'x.ts:2',
      'x.ts:3',
      'x.ts:4',
      'x.ts:5',
      'x.ts:6',
      'x.ts:9 (in run)',
      'x.ts:10 (in later)',
    ]);
  });

  it('names a write outside the entry point, in cli.ts itself too (main() is what tests run in-process)', () => {
    const writes = [
      "src/cli.ts:240: process.env.X ??= 'true' (in run)",
      "src/cli.ts:20: process.env.Y = '1' (in main)",
      'src/kv/offsite/store.ts:60: process.env.AWS_PROFILE = settings.profile (in open)',
      "src/core/wasm.ts:12: v8.setFlagsFromString('--liftoff-only')",
    ];
    expect(splitEntry(writes)).toEqual({ entry: [writes[0]], outside: writes.slice(1) });
  });

  it('src/ and the packages write no process.env and set no V8 flag but in src/cli.ts run()', () => {
    const { outside, entry } = writesOutsideEntry(['src', 'packages/shared/src', 'packages/mock/src', 'packages/etcd-sim/src']);
    expect(outside).toEqual([]);
    // the entry point's own are found (the rule is not met by reading nothing): the SDK's notice, the s3 and wasm flags
    const said = entry.join('\n');
    expect(said).toMatch(/process\.env\.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED \?\?=/);
    expect(said).toMatch(/setFlagsFromString\('--semi-space-growth-factor=1'\)/);
    expect(said).toMatch(/setFlagsFromString\('--liftoff-only'\)/);
    expect(entry).toHaveLength(3);
  });
});
