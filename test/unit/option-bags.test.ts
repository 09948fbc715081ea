import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The root of the kv wing's option bags: every option of a run, as the verbs build them (src/kv/upgrade/options.ts). */
const ROOT_BAGS = ['UpgradeOptions'];

/** Wrappers that leave a bag (nearly) whole: `Omit<Bag, 'to'>` is the bag less a key, not what a function reads. */
const WHOLE_WRAPPERS = new Set(['Omit', 'Partial', 'Required', 'Readonly']);

/**
 * The bags declared in SOURCES: the roots, and every interface or type built from a bag whole
 * (`interface LadderOptions extends Omit<UpgradeOptions, …>`, `type X = UpgradeOptions & {…}`), to a fixpoint.
 */
export function bagsOf(sources: ts.SourceFile[], roots: string[] = ROOT_BAGS): Set<string> {
  const decls: Array<{ name: string; from: ts.TypeNode[] }> = [];
  for (const sf of sources) {
    for (const s of sf.statements) {
      if (ts.isInterfaceDeclaration(s)) {
        const from = (s.heritageClauses ?? []).flatMap((h) => h.types.map((t) => t as ts.TypeNode));
        decls.push({ name: s.name.text, from });
      } else if (ts.isTypeAliasDeclaration(s)) decls.push({ name: s.name.text, from: [s.type] });
    }
  }
  const bags = new Set(roots);
  for (let grew = true; grew;) {
    grew = false;
    for (const d of decls) {
      if (!bags.has(d.name) && d.from.some((t) => wholeBag(t, bags))) {
        bags.add(d.name);
        grew = true;
      }
    }
  }
  return bags;
}

/**
 * Whether the type T hands a function a whole bag: the bag itself, the bag less some keys (Omit, Partial, …),
 * `Pick<Bag, keyof Bag>`, a step's env left to its default keys (`StepEnv`, `StepEnv<keyof UpgradeOptions>`),
 * or an intersection or union holding one of those. `Pick<Bag, named keys>`, `Bag['exec']` and the named
 * parts (UpgradeTarget, …) are what a function reads, not the bag.
 */
function wholeBag(t: ts.TypeNode, bags: Set<string>): boolean {
  if (ts.isParenthesizedTypeNode(t)) return wholeBag(t.type, bags);
  if (ts.isIntersectionTypeNode(t) || ts.isUnionTypeNode(t)) return t.types.some((x) => wholeBag(x, bags));
  const ref = ts.isTypeReferenceNode(t)
    ? { name: t.typeName.getText(), args: t.typeArguments }
    : ts.isExpressionWithTypeArguments(t)
      ? { name: t.expression.getText(), args: t.typeArguments }
      : undefined;
  if (!ref) return false;
  const args = ref.args ?? [];
  if (bags.has(ref.name)) return args.length === 0;
  if (WHOLE_WRAPPERS.has(ref.name)) return args[0] !== undefined && wholeBag(args[0], bags);
  const keyofBag = (k: ts.TypeNode | undefined) =>
    k !== undefined && ts.isTypeOperatorNode(k) && k.operator === ts.SyntaxKind.KeyOfKeyword && wholeBag(k.type, bags);
  if (ref.name === 'Pick') return args[0] !== undefined && wholeBag(args[0], bags) && keyofBag(args[1]);
  if (ref.name === 'StepEnv') return args.length === 0 || keyofBag(args[0]);
  return false;
}

/** What a function is called in its file: `name`, `Class.method`, `Class.constructor`, or the variable or property an arrow is given to. */
function nameOf(n: ts.SignatureDeclaration): string {
  const cls = n.parent && ts.isClassLike(n.parent) ? `${n.parent.name?.getText() ?? '(class)'}.` : '';
  if (ts.isConstructorDeclaration(n)) return `${cls}constructor`;
  if (n.name) return `${cls}${n.name.getText()}`;
  const p = n.parent;
  if (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) return p.name.getText();
  return '(anonymous)';
}

const parse = (text: string, file: string) => ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);

/** The functions of SF that take a whole bag (a parameter of a function, method, constructor or arrow), as `file:line name(param: type)`. */
export function bagTakers(sf: ts.SourceFile, bags: Set<string>): string[] {
  const file = sf.fileName;
  const out: string[] = [];
  const visit = (n: ts.Node) => {
    if (ts.isFunctionLike(n) && !ts.isFunctionTypeNode(n)) {
      for (const p of n.parameters) {
        if (p.type && wholeBag(p.type, bags)) {
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
const walk = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
/** Every source of the kv wing, parsed once. */
const KV = walk(join(ROOT, 'src/kv')).map((f) => parse(readFileSync(f, 'utf8'), relative(ROOT, f)));

/**
 * The only functions under src/kv that take a whole bag, as `file function`: a verb's one entry (the
 * function its command file calls with the options it parsed, named in `verb`), and why it is the entry.
 */
const ENTRIES: Record<string, { why: string; verb?: string }> = {
  'src/kv/ladder/ladder.ts runUpgradeOrLadder': {
    why: "kv upgrade's entry: the command calls it with the options it parsed, and it hands each hop's run and the v2 fix their part",
    verb: 'src/commands/kv/upgrade.ts',
  },
  'src/kv/restore/downgrade.ts runDowngrade': {
    why: "kv downgrade's entry: the command calls it with the options it parsed, and it hands the executor, the trials and the end their part",
    verb: 'src/commands/kv/downgrade.ts',
  },
};

describe('values with names, not option bags (issue 46)', () => {
  const bags = bagsOf(KV);

  it('finds each way a function takes a whole bag, and leaves the narrow ones (the check itself works)', () => {
    const declared = bagsOf([
      parse(
        [
          'export type UpgradeOptions = UpgradeTarget & UpgradePorts;',
          "interface LadderOptions extends Omit<UpgradeOptions, 'to'> { to: string }",
          'interface FixOptions extends LadderOptions { etcdutl: string }',
          'type Both = UpgradeOptions & { x: number };',
          // not a bag: a Pick of what it reads, a part
          "interface Narrow extends Pick<UpgradeOptions, 'to'> {}",
          'type Part = UpgradeTarget;',
        ].join('\n'),
        'x.ts',
      ),
    ]);
    expect([...declared].sort()).toEqual(['Both', 'FixOptions', 'LadderOptions', 'UpgradeOptions']);
    const text = [
      'export function a(o: UpgradeOptions): void {}',
      'const b = async (o: LadderOptions) => o;',
      'class C { constructor(private readonly o: DowngradeOptions) {} m(x: number, o: FixOptions) {} }',
      'const d = { run: function (o: UpgradeOptions) {} };',
      "function f(o: Omit<LadderOptions, 'to'>, e: StepEnv, g: Pick<UpgradeOptions, keyof UpgradeOptions>, h: (UpgradeOptions & { x: 1 })) {}",
      'function i(e: StepEnv<keyof UpgradeOptions, Journal>) {}',
      // not the bag: a Pick, one option's type, a named part, a step's env of named keys, a function type, another type
      "export function j(o: Pick<UpgradeOptions, 'to'>, x: LadderOptions['exec'], t: UpgradeTarget, e: StepEnv<Look, RunRecord>): void {}",
      'type F = (o: UpgradeOptions) => void;',
      'function k(o: UpgradeOptionsLike) {}',
    ].join('\n');
    expect(bagTakers(parse(text, 'x.ts'), new Set(['UpgradeOptions', 'LadderOptions', 'DowngradeOptions', 'FixOptions']))).toEqual([
      'x.ts:1 a(o: UpgradeOptions)',
      'x.ts:2 b(o: LadderOptions)',
      'x.ts:3 C.constructor(o: DowngradeOptions)',
      'x.ts:3 C.m(o: FixOptions)',
      'x.ts:4 run(o: UpgradeOptions)',
      "x.ts:5 f(o: Omit<LadderOptions, 'to'>)",
      'x.ts:5 f(e: StepEnv)',
      'x.ts:5 f(g: Pick<UpgradeOptions, keyof UpgradeOptions>)',
      'x.ts:5 f(h: (UpgradeOptions & { x: 1 }))',
      'x.ts:6 i(e: StepEnv<keyof UpgradeOptions, Journal>)',
    ]);
    expect(doubleCasts('const j = lf as unknown as Journal; const k = lf as Journal;', 'x.ts')).toEqual(['x.ts: lf as unknown as Journal']);
  });

  it("the kv wing's bags are the run's options and those built from them whole", () => {
    for (const b of ['UpgradeOptions', 'LadderOptions', 'DowngradeOptions']) expect(bags, b).toContain(b);
  });

  it('no function under src/kv takes a whole bag but the entry points: each other function names what it reads', () => {
    const takers = KV.flatMap((sf) => bagTakers(sf, bags));
    const key = (t: string) => t.replace(/:\d+ /, ' ').replace(/\(.*$/, '');
    const strays = takers.filter((t) => !(key(t) in ENTRIES));
    expect(
      strays,
      `a whole option bag (${[...bags].join(', ')}) outside the entry points: take a Pick of the named key groups it reads (Look, Snapshotting, …)`,
    ).toEqual([]);
    // the allow-list is exact: an entry narrowed since (or renamed) leaves it
    const stale = Object.keys(ENTRIES).filter((e) => !takers.some((t) => key(t) === e));
    expect(stale, 'no longer takes a whole bag: drop it from ENTRIES').toEqual([]);
  });

  it("each entry point is its verb's: the command file calls it", () => {
    for (const [entry, { why, verb }] of Object.entries(ENTRIES)) {
      expect(why, entry).not.toBe('');
      if (verb) expect(read(verb), `${entry}: called by ${verb}`).toMatch(new RegExp(`\\b${entry.split(' ')[1]}\\(`));
    }
  });

  it('every function of the pre-flight reads a Pick of the options (none takes them whole, none goes without)', () => {
    const pre = read('src/kv/upgrade/preflight.ts');
    for (const name of ['stageBinaries', 'resumableJournal', 'planWarnings', 'preflight', 'electionSettled', 'hashPlanLine']) {
      expect(pre, name).toMatch(new RegExp(`function ${name}\\(\\s*(size: number, )?o: Pick<UpgradeOptions, `));
    }
  });

  it("the ladder's file and the v2 fix's are written as themselves, with no cast to the run's journal", () => {
    for (const f of ['src/kv/ladder/ladder.ts', 'src/kv/v2fix/v2store-fix.ts']) expect(doubleCasts(read(f), f)).toEqual([]);
  });
});
