import { readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import ts from 'typescript';
import { placeOf, STARTS_HERE, BY_HOST_TEMPLATES, ELSEWHERE } from '../../src/kv/drivers/driver.js';
import { tsFiles } from '../helpers/ts-files.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Every .ts file under src/DIR, as a path from the repository root and its text. */
const srcFiles = (dir: string) =>
  tsFiles(join(ROOT, 'src', dir)).map((abs) => ({ file: relative(ROOT, abs).split(sep).join('/'), text: readFileSync(abs, 'utf8') }));
const kvFiles = () => srcFiles('kv');

/** The kinds a member driver (or a cluster file's driver entry) is of: a comparison with one asks which driver it is. */
const DRIVER_KINDS = new Set(['local', 'command', 'container', 'systemd']);
/** Where a driver's kind may be read: the drivers themselves and the sandbox's. */
const DRIVERS_ROOM = /^src\/kv\/(drivers|sandbox)\//;

/**
 * What in TEXT asks a driver which one it is, as `file:line: what`: a `.type` compared (===, !==, ==, !=)
 * with a driver's kind, or a `switch` on a `.type` with a case of one.
 */
export function driverKindBranches(text: string, file: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const at = (n: ts.Node, what: string) => out.push(`${file}:${sf.getLineAndCharacterOfPosition(n.getStart()).line + 1}: ${what}`);
  const kind = (n: ts.Node) => ts.isStringLiteralLike(n) && DRIVER_KINDS.has(n.text);
  const typeRead = (n: ts.Node) => ts.isPropertyAccessExpression(n) && n.name.text === 'type';
  const compare = [
    ts.SyntaxKind.EqualsEqualsEqualsToken,
    ts.SyntaxKind.ExclamationEqualsEqualsToken,
    ts.SyntaxKind.EqualsEqualsToken,
    ts.SyntaxKind.ExclamationEqualsToken,
  ];
  const visit = (n: ts.Node) => {
    if (ts.isBinaryExpression(n) && compare.includes(n.operatorToken.kind)) {
      if ((typeRead(n.left) && kind(n.right)) || (typeRead(n.right) && kind(n.left))) at(n, `compares ${n.getText()}`);
    } else if (ts.isSwitchStatement(n) && typeRead(n.expression)) {
      for (const c of n.caseBlock.clauses)
        if (ts.isCaseClause(c) && kind(c.expression)) at(c, `switches ${n.expression.getText()} to case ${c.expression.getText()}`);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/**
 * No flow asks which driver it is (issue 59), nor does a verb: what it needs to know (whether opsctl starts
 * the members itself, whether the operator's templates run them on their hosts, what their program keeps, how
 * a clone of them is found) it asks the driver (placeOf, capabilitiesOf, recordClone, keptByHops), answered by
 * each driver; the one place that builds a driver from its kind is kv/drivers/entry.ts.
 */
describe('no kv flow or verb asks which driver it is', () => {
  it('finds each comparison with a driver kind (the check itself works)', () => {
    const text = [
      "if (o.driver?.type !== 'local') f();",
      "const x = driver.type === 'command' && g();",
      "if ('container' === d.type) h();",
      "switch (spec.type) { case 'systemd': break; case 'local': break; }",
      "if (env.driver.type == 'command') i();",
      // not a driver's kind: a mount, an event, a shell word, the driver's answer
      "if (m.type !== 'tmpfs') j();",
      "const e = ev.type === 'DELETE';",
      "switch (word) { case 'command': break; }",
      'if (placeOf(o.driver).startsHere) k();',
    ].join('\n');
    expect(driverKindBranches(text, 'x.ts').map((l) => l.replace(/: .*$/, ''))).toEqual(['x.ts:1', 'x.ts:2', 'x.ts:3', 'x.ts:4', 'x.ts:4', 'x.ts:5']);
  });

  it('outside src/kv/drivers and src/kv/sandbox: 0 branches on a driver kind in src/kv (none allowed)', () => {
    const kv = kvFiles();
    expect(kv.length).toBeGreaterThan(150);
    const outside = kv.filter((f) => !DRIVERS_ROOM.test(f.file));
    expect(outside.length).toBeGreaterThan(100);
    expect(outside.filter((f) => /\.type\b|switch/.test(f.text)).flatMap((f) => driverKindBranches(f.text, f.file))).toEqual([]);
    // the drivers' own room does tell its kinds apart (the rule is not met by reading nothing)
    const own = kv.filter((f) => DRIVERS_ROOM.test(f.file));
    expect(own.flatMap((f) => driverKindBranches(f.text, f.file)).length).toBeGreaterThan(0);
  });

  it('0 branches on a driver kind in src/commands either (the verbs ask the driver, or kv/drivers/entry.ts builds it)', () => {
    const commands = srcFiles('commands');
    expect(commands.filter((f) => f.file.startsWith('src/commands/kv/')).length).toBeGreaterThan(40);
    expect(commands.filter((f) => /\.type\b|switch/.test(f.text)).flatMap((f) => driverKindBranches(f.text, f.file))).toEqual([]);
  });

  it('each driver kind answers where its members run; a driver that says so itself is taken at its word', () => {
    expect(placeOf(undefined)).toEqual(ELSEWHERE);
    expect(placeOf({ type: 'local' })).toEqual(STARTS_HERE);
    expect(placeOf({ type: 'command' })).toEqual(BY_HOST_TEMPLATES);
    expect(placeOf({ type: 'container' })).toEqual(ELSEWHERE);
    expect(placeOf({ type: 'command', place: STARTS_HERE })).toEqual({ startsHere: true, hostTemplates: false });
    // every driver class says it itself (the kind's answer is only for a driver that does not: a test's fake)
    const classes = kvFiles().filter((f) => /implements MemberDriver\b/.test(f.text));
    expect(classes.map((f) => f.file).sort()).toEqual([
      'src/kv/containers/driver.ts',
      'src/kv/drivers/command.ts',
      'src/kv/drivers/local.ts',
      'src/kv/rehearsal/command-clone.ts',
    ]);
    for (const f of classes) expect(f.text, f.file).toMatch(/readonly place = (STARTS_HERE|BY_HOST_TEMPLATES|ELSEWHERE);/);
  });
});
