import { readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { tsFiles } from '../helpers/ts-files.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * One type per name in the kv room (issue 59 item 3): a name exported as a type or an interface by two files of
 * src/kv, src/commands/kv or src/core (which kv reads) meant two things in two layers (the command's flags and the
 * domain's options both `UpgradeOptions`; a prune's verdict and a rehearsal's both `KeptVerdict`). A command's own
 * flags are its `Options` (one per command file, as every noun spells them): the one name allowed twice.
 */
const ROOMS = ['src/kv', 'src/commands/kv', 'src/core'];
const PER_COMMAND = new Set(['Options']);

/** The type and interface names TEXT exports (declared at its top level with `export`). */
export function exportedTypeNames(text: string, file = 'x.ts'): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  return sf.statements.flatMap((s) =>
    (ts.isInterfaceDeclaration(s) || ts.isTypeAliasDeclaration(s)) && s.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword) ? [s.name.text] : [],
  );
}

describe('one type per name', () => {
  it('reads exported interfaces and type aliases, not local ones, functions or re-exports', () => {
    const text = [
      'export interface A { x: number }',
      'export type B = string;',
      'interface C {}',
      'type D = number;',
      'export function e() {}',
      "export type { F } from './f.js';",
    ].join('\n');
    expect(exportedTypeNames(text)).toEqual(['A', 'B']);
  });

  it('no name is exported as a type by two files of the kv room', () => {
    const where = new Map<string, string[]>();
    for (const room of ROOMS)
      for (const abs of tsFiles(join(ROOT, room)).filter((f) => !f.endsWith('.d.ts'))) {
        const file = relative(ROOT, abs).split(sep).join('/');
        for (const name of exportedTypeNames(readFileSync(abs, 'utf8'), file)) where.set(name, [...(where.get(name) ?? []), file]);
      }
    const twice = [...where].filter(([name, files]) => files.length > 1 && !PER_COMMAND.has(name)).map(([name, files]) => `${name}: ${files.join(', ')}`);
    expect(twice).toEqual([]);
    expect(where.size).toBeGreaterThan(100);
  });
});
