/**
 * The one way apply files (tracker and labels) name and report their problems: every problem at once,
 * one line each, as `path: what is wrong`, where the path is JSON-path style and 0-based like the
 * file's own lists: `labels[3].color`, `fields[0].choices[1].name`.
 */

/** `itemPath('fields', 0, 'choices', 1)` → `fields[0].choices[1]`; a number is a list index. */
export function itemPath(...parts: Array<string | number>): string {
  let out = '';
  for (const p of parts) {
    if (typeof p === 'number') out += `[${p}]`;
    else if (p !== '') out += out ? `.${p}` : p;
  }
  return out;
}

/** A dotted path from a validator (`labels.0.color`) in the same style (`labels[0].color`). */
export function dottedToItemPath(dotted: string): string {
  return itemPath(...dotted.split('.').map((p) => (/^\d+$/.test(p) ? Number(p) : p)));
}

/** "3 problems:" followed by one indented line per problem. */
export function problemList(problems: readonly string[]): string {
  return `${problems.length} problem${problems.length === 1 ? '' : 's'}:\n  ${problems.join('\n  ')}`;
}

/** A parser's error as line, column and what was expected, never quoting the file (see syntax-error.ts). */
export { syntaxErrorText } from './syntax-error.js';

/** "a label", "an epic", "a uuid", "an hour": the indefinite article a noun takes. */
export function withArticle(noun: string): string {
  const an = /^[aeiou]/i.test(noun) ? !/^(u[bcfhjkqrstn][aeiou]|uu|eu|one)/i.test(noun) : /^(hour|honest|honou?r)/i.test(noun);
  return `${an ? 'an' : 'a'} ${noun}`;
}

/** `plural(1, 'label')` → "1 label", `plural(2, 'story', 'stories')` → "2 stories". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
