import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

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

/** Every place TEXT changes process-wide state: writes to process.env (assignment, delete, Object.assign) and V8 flags. */
export function processStateWrites(text: string, name = 'x.ts'): string[] {
  const sf = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const at = (n: ts.Node, what: string) => found.push(`${name}:${sf.getLineAndCharacterOfPosition(n.getStart()).line + 1}: ${what}`);
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

/**
 * Library code never changes the process it runs in (issue 46): no write to process.env and no V8 flag
 * under src/kv (the AWS profile goes to the S3 client as a setting; the SDK's notice is silenced by the
 * entry point, src/cli.ts's run()).
 */
describe('no process-wide state changed by kv library code', () => {
  it('finds the writes it looks for (the check itself works)', () => {
    const text = [
      "process.env.AWS_PROFILE = 'x';",
      "process.env['A'] ??= '1';",
      'delete process.env.B;',
      'Object.assign(process.env, { C: 1 });',
      "v8.setFlagsFromString('--x');",
      "setFlagsFromString('--y');",
      'const read = process.env.D ?? process.env["E"];',
      'if (process.env.F === "1") {}',
    ].join('\n');
    expect(processStateWrites(text).map((l) => l.split(': ')[0])).toEqual(['x.ts:1', 'x.ts:2', 'x.ts:3', 'x.ts:4', 'x.ts:5', 'x.ts:6']);
  });

  it('src/kv writes no process.env and sets no V8 flag', () => {
    const kv = join(SRC, 'kv');
    // parsed only where the words appear (parsing all of kv is most of this test's time otherwise)
    const writes = files(kv).flatMap((f) => {
      const text = readFileSync(f, 'utf8');
      return /process\.env|setFlagsFromString/.test(text) ? processStateWrites(text, relative(SRC, f)) : [];
    });
    expect(writes).toEqual([]);
  });
});
