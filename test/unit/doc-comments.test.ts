import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * A doc comment belongs to the declaration right below it. Two doc comments in a row mean the first
 * one stands above the wrong code (its declaration moved or was deleted): the reader is misled.
 * strandedLines gives the 1-based numbers of the lines that open a doc comment right after another one ended.
 */
function strandedLines(lines: string[]): number[] {
  const hits: number[] = [];
  let docEndedAt = -2;
  lines.forEach((line, i) => {
    const text = line.trim();
    if (text.startsWith('/**') && docEndedAt === i - 1) hits.push(i + 1);
    if ((text.startsWith('/**') || text.startsWith('*')) && text.endsWith('*/')) docEndedAt = i;
  });
  return hits;
}

function strandedDocComments(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && entry.name !== 'dist') walk(path);
      } else if (/\.(ts|mts|cts|mjs|cjs)$/.test(entry.name)) {
        for (const line of strandedLines(readFileSync(path, 'utf8').split('\n'))) found.push(`${path}:${line}`);
      }
    }
  };
  walk(root);
  return found;
}

describe('doc comments', () => {
  it('stand above the code they describe (never two in a row)', () => {
    const roots = ['src', 'test', 'scripts', 'bin'].filter((r) => {
      try {
        return readdirSync(r).length > 0;
      } catch {
        return false;
      }
    });
    expect(roots.flatMap(strandedDocComments)).toEqual([]);
  });

  it('the check finds a stranded one', () => {
    expect(strandedLines(['/** moved away */', '/** the real one */', 'export const x = 1;'])).toEqual([2]);
    expect(strandedLines(['/**', ' * moved away', ' */', '  /** indented */', 'x;'])).toEqual([4]);
    expect(strandedLines(['/** one */', 'const a = 1;', '/** two */', 'const b = 2;'])).toEqual([]);
    expect(strandedLines(['/** module */', '', '/** first */', 'x;'])).toEqual([]);
  });
});
