import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The kv wing's option bags: every option of a run, as the verbs build them (src/kv/upgrade/options.ts, ladder/record.ts, …). */
const BAGS = new Set(['UpgradeOptions', 'LadderOptions', 'DowngradeOptions', 'V2FixOptions']);

/**
 * The functions of TEXT that take a whole bag, as `file:line name`: a parameter (of a function, method,
 * constructor or arrow) whose type is the bag itself. `Pick<Bag, …>`, `Bag['exec']` and the named parts
 * (UpgradeTarget, …) are what a function reads, not the bag.
 */
export function bagTakers(text: string, file: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const nameOf = (n: ts.SignatureDeclaration): string => {
    if (n.name) return n.name.getText();
    if (ts.isConstructorDeclaration(n)) return 'constructor';
    const p = n.parent;
    if (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) return p.name.getText();
    return '(anonymous)';
  };
  const visit = (n: ts.Node) => {
    if (ts.isFunctionLike(n) && !ts.isFunctionTypeNode(n)) {
      for (const p of n.parameters) {
        if (p.type && ts.isTypeReferenceNode(p.type) && !p.type.typeArguments && BAGS.has(p.type.typeName.getText())) {
          out.push(`${file}:${sf.getLineAndCharacterOfPosition(n.getStart()).line + 1} ${nameOf(n)}(${p.name.getText()}: ${p.type.getText()})`);
        }
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/** The `x as unknown as T` casts of TEXT (a type forced over another, as `file: cast`). */
function doubleCasts(text: string, file: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (n: ts.Node) => {
    if (ts.isAsExpression(n) && ts.isAsExpression(n.expression) && n.expression.type.kind === ts.SyntaxKind.UnknownKeyword) out.push(`${file}: ${n.getText()}`);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

const read = (file: string) => readFileSync(`${ROOT}/${file}`, 'utf8');

/** The upgrade's plan and the ladder: each function takes the values it reads (issue 46), here the bag stops at the entries. */
const NARROWED = [
  'src/kv/upgrade/preflight.ts',
  'src/kv/upgrade/executor.ts',
  'src/kv/upgrade/run.ts',
  'src/kv/upgrade/run-journal.ts',
  'src/kv/ladder/ladder.ts',
  'src/kv/ladder/facts.ts',
  'src/kv/ladder/checks.ts',
  'src/kv/ladder/plan-text.ts',
  'src/kv/ladder/record.ts',
];

describe('values with names, not option bags (issue 46)', () => {
  it('finds each way a function takes a whole bag, and leaves the narrow ones (the check itself works)', () => {
    const text = [
      'export function a(o: UpgradeOptions): void {}',
      'const b = async (o: LadderOptions) => o;',
      'class C { constructor(private readonly o: DowngradeOptions) {} m(x: number, o: V2FixOptions) {} }',
      'const d = { run: function (o: UpgradeOptions) {} };',
      // not the bag: a Pick, one option's type, a named part, a function type, another type
      "export function e(o: Pick<UpgradeOptions, 'to'>, x: LadderOptions['exec'], t: UpgradeTarget): void {}",
      'type F = (o: UpgradeOptions) => void;',
      'function g(o: UpgradeOptionsLike) {}',
    ].join('\n');
    expect(bagTakers(text, 'x.ts')).toEqual([
      'x.ts:1 a(o: UpgradeOptions)',
      'x.ts:2 b(o: LadderOptions)',
      'x.ts:3 constructor(o: DowngradeOptions)',
      'x.ts:3 m(o: V2FixOptions)',
      'x.ts:4 run(o: UpgradeOptions)',
    ]);
    expect(doubleCasts('const j = lf as unknown as Journal; const k = lf as Journal;', 'x.ts')).toEqual(['x.ts: lf as unknown as Journal']);
  });

  it("the pre-flight, the executor (its run and journal too) and the ladder take what they read: the bag only at the ladder's entry (runUpgradeOrLadder) and the v2 fix", () => {
    const takers = NARROWED.flatMap((f) => bagTakers(read(f), f)).map((l) => l.replace(/:\d+ /, ' '));
    expect(takers).toEqual([
      'src/kv/ladder/ladder.ts runUpgradeOrLadder(o: LadderOptions)',
      // hands the bag on to v2store-fix.ts's fixV2store (V2FixOptions)
      'src/kv/ladder/checks.ts runFix(o: LadderOptions)',
    ]);
    // every function of preflight.ts reads a Pick of the options (none takes them whole, none goes without)
    const pre = read('src/kv/upgrade/preflight.ts');
    for (const name of ['stageBinaries', 'resumableJournal', 'planWarnings', 'preflight', 'electionSettled', 'hashPlanLine']) {
      expect(pre, name).toMatch(new RegExp(`function ${name}\\(\\s*(size: number, )?o: Pick<UpgradeOptions, `));
    }
    // the executor's entry, its run (the constructor and start) and the run's journal: Picks of the named key groups
    expect(read('src/kv/upgrade/executor.ts')).toMatch(/function runUpgrade\(o: Pick<UpgradeOptions, Executing>\)/);
    expect(read('src/kv/upgrade/run.ts').match(/\bo: Pick<UpgradeOptions, Running>/g)).toHaveLength(2);
    expect(read('src/kv/upgrade/run-journal.ts')).toMatch(/function runJournal\(\s*o: Pick<UpgradeOptions, /);
  });

  it("the ladder's file is written as itself, with no cast to the run's journal", () => {
    expect(doubleCasts(read('src/kv/ladder/ladder.ts'), 'src/kv/ladder/ladder.ts')).toEqual([]);
  });
});
