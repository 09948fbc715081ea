import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The most positional parameters a function of src/ takes: past it, a function takes named values (an object). */
const MAX_POSITIONAL = 6;

/** Whether a type written for a parameter is a boolean (`boolean`, `true`, `false`, or a union holding one). */
function booleanType(t: ts.TypeNode | undefined): boolean {
  if (!t) return false;
  if (t.kind === ts.SyntaxKind.BooleanKeyword) return true;
  if (ts.isLiteralTypeNode(t)) return t.literal.kind === ts.SyntaxKind.TrueKeyword || t.literal.kind === ts.SyntaxKind.FalseKeyword;
  if (ts.isUnionTypeNode(t)) return t.types.some(booleanType);
  if (ts.isParenthesizedTypeNode(t)) return booleanType(t.type);
  return false;
}

/** The name a reader finds a function by: its own, or the variable, property or class member it is assigned to. */
function nameOf(n: ts.SignatureDeclaration): string {
  if (ts.isConstructorDeclaration(n)) return `${n.parent.name?.text ?? '(class)'} constructor`;
  if (n.name) return n.name.getText();
  const p = n.parent;
  if (
    (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p) || ts.isPropertySignature(p) || ts.isTypeAliasDeclaration(p)) &&
    p.name
  )
    return p.name.getText();
  return '(anonymous)';
}

/**
 * Each function of TEXT (declarations, methods, constructors, arrow functions, function expressions and
 * function types) that takes more than MAX_POSITIONAL positional parameters or a boolean positional one,
 * as `file:line name: what`. A boolean is one typed so (`flag: boolean`, `boolean | undefined`) or defaulted
 * to `true`/`false` without a type: its call sites read `f(x, true)`. An object of named values is not one.
 */
export function paramProblems(text: string, file: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (n: ts.Node) => {
    if (ts.isFunctionLike(n)) {
      const params = n.parameters.filter((p) => !(ts.isIdentifier(p.name) && p.name.text === 'this'));
      const at = `${file}:${sf.getLineAndCharacterOfPosition(n.getStart()).line + 1} ${nameOf(n)}`;
      if (params.length > MAX_POSITIONAL) out.push(`${at}: ${params.length} positional parameters`);
      for (const p of params) {
        const bool = p.type ? booleanType(p.type) : p.initializer?.kind === ts.SyntaxKind.TrueKeyword || p.initializer?.kind === ts.SyntaxKind.FalseKeyword;
        if (bool && ts.isIdentifier(p.name)) out.push(`${at}: a boolean positional parameter (${p.name.text})`);
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/** Every .ts file of src/ as a path from the repository root and its text. */
function srcFiles(): Array<{ file: string; text: string }> {
  return readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => ({ file: `src/${f.split('\\').join('/')}`, text: readFileSync(join(ROOT, 'src', f), 'utf8') }));
}

describe('no function in src takes 7 or more positional parameters, or a boolean positional one', () => {
  it('finds each (the check itself works)', () => {
    const text = [
      'export function a(x: number, y: boolean) {}',
      'function b(p1: string, p2: string, p3: string, p4: string, p5: string, p6: string, p7: string) {}',
      'const c = (force = false) => force;',
      'class D { m(ok?: boolean | undefined) {} constructor(a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7) {} }',
      'type E = (durable: boolean) => void;',
      // not one: named values, six positional, a boolean inside an object, `this`
      'function f(o: { force: boolean }, { durable = true }: { durable?: boolean } = {}) {}',
      'function g(this: void, p1: 1, p2: 2, p3: 3, p4: 4, p5: 5, p6: 6) {}',
    ].join('\n');
    expect(paramProblems(text, 'x.ts')).toEqual([
      'x.ts:1 a: a boolean positional parameter (y)',
      'x.ts:2 b: 7 positional parameters',
      'x.ts:3 c: a boolean positional parameter (force)',
      'x.ts:4 m: a boolean positional parameter (ok)',
      'x.ts:4 D constructor: 7 positional parameters',
      'x.ts:5 E: a boolean positional parameter (durable)',
    ]);
  });

  it('src/ holds none', () => {
    const files = srcFiles();
    expect(files.length).toBeGreaterThan(300);
    expect(files.flatMap((f) => paramProblems(f.text, f.file))).toEqual([]);
  });
});
