import { YamlTextError, yamlProblemText } from './yaml.js';

/**
 * Parse errors that never echo the file: a file may be anything the user pointed a flag at
 * (`--data @/etc/shadow`), and the parsers' own messages quote the text around the error. These say
 * the line, the column and what was expected, nothing of the content.
 */

/** "line L, column C" of a 0-based offset into `text` (both 1-based). */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, column: offset - start + 1 };
}

/** Where JSON.parse failed on `text` and what it expected there, or undefined when `text` is valid JSON. */
export function jsonSyntaxProblem(text: string): { offset: number; expected: string } | undefined {
  const n = text.length;
  let i = 0;
  const stack: Array<'[' | '{'> = [];
  let state: 'value' | 'value-or-end' | 'key' | 'key-or-end' | 'after' = 'value';
  const fail = (expected: string, at = i) => ({ offset: at, expected });
  const skipSpace = () => {
    while (i < n && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  // after the opening quote: the offset of a problem, or undefined with i after the closing quote
  const string = (): { offset: number; expected: string } | undefined => {
    const open = i;
    i++;
    for (;;) {
      if (i >= n) return fail('a closing " (the string that starts here is not terminated)', open);
      const c = text.charCodeAt(i);
      if (c === 34) {
        i++;
        return undefined;
      }
      if (c < 0x20) return fail('no raw control character inside a string (write it as \\n, \\t or \\uXXXX)');
      if (c === 92) {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) return fail('four hex digits after \\u');
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else return fail('a valid escape: \\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX');
      } else i++;
    }
  };
  const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
  for (;;) {
    skipSpace();
    if (state === 'after') {
      const top = stack.at(-1);
      if (top === undefined) return i < n ? fail('the end of the document (JSON holds one value)') : undefined;
      const c = text[i];
      if (c === ',') {
        i++;
        state = top === '[' ? 'value' : 'key';
      } else if (c === (top === '[' ? ']' : '}')) {
        i++;
        stack.pop();
      } else return fail(top === '[' ? "',' or ']' after an array element" : "',' or '}' after a property value");
      continue;
    }
    if (i >= n) return fail(state === 'key' || state === 'key-or-end' ? 'a property name (the document ends early)' : 'a value (the document ends early)');
    const c = text[i];
    if (state === 'key' || state === 'key-or-end') {
      if (state === 'key-or-end' && c === '}') {
        i++;
        stack.pop();
        state = 'after';
        continue;
      }
      if (c !== '"') return fail(`a property name in double quotes${state === 'key-or-end' ? " or '}'" : ''}`);
      const bad = string();
      if (bad) return bad;
      skipSpace();
      if (text[i] !== ':') return fail("':' after a property name");
      i++;
      state = 'value';
      continue;
    }
    if (state === 'value-or-end' && c === ']') {
      i++;
      stack.pop();
      state = 'after';
      continue;
    }
    if (c === '{' || c === '[') {
      stack.push(c);
      i++;
      state = c === '{' ? 'key-or-end' : 'value-or-end';
      continue;
    }
    state = 'after';
    if (c === '"') {
      const bad = string();
      if (bad) return bad;
      continue;
    }
    const word = ['true', 'false', 'null'].find((w) => text.startsWith(w, i));
    if (word) {
      i += word.length;
      continue;
    }
    NUMBER.lastIndex = i;
    if (NUMBER.test(text)) {
      i = NUMBER.lastIndex;
      continue;
    }
    return fail('a value: an object, array, string in double quotes, number, true, false or null');
  }
}

/** "line L, column C: expected …" for text that JSON.parse refused; never a character of the text. */
export function jsonSyntaxText(text: string): string {
  const problem = jsonSyntaxProblem(text);
  if (!problem) return 'not valid JSON';
  const { line, column } = lineColumn(text, problem.offset);
  return `line ${line}, column ${column}: expected ${problem.expected}`;
}

/**
 * "line L, column C: expected …" for a parser's error (the YAML reader's, a CSV parser's, JSON.parse's
 * when `text` is given), without quoting any of the text; a parser error of unknown shape is named by
 * its kind only.
 */
export function syntaxErrorText(err: unknown, text?: string): string {
  const e = err as { name?: unknown; code?: unknown; linePos?: Array<{ line: number; col: number }>; lines?: unknown; message?: unknown };
  if (err instanceof SyntaxError && text !== undefined) return jsonSyntaxText(text);
  // YAML: the one reader (core/yaml.ts) already says it in these words
  if (err instanceof YamlTextError) return err.message;
  const code = typeof e?.code === 'string' ? e.code : undefined;
  const pos = e?.linePos?.[0];
  if (pos && code) return yamlProblemText(code, pos);
  if (code?.startsWith('CSV_')) {
    const what = code.slice(4).toLowerCase().replace(/_/g, ' ');
    return `${typeof e.lines === 'number' ? `line ${e.lines}: ` : ''}${what}`;
  }
  return pos ? `line ${pos.line}, column ${pos.col}: not valid` : 'not valid';
}

/** An unknown key of a file as a message may name it: quoted when it looks like a key, else only its length (the file may be anything). */
export function keyName(key: string): string {
  return isNameLike(key) ? `"${key}"` : `(a key of ${key.length} characters that is not a name)`;
}

/** A key a message may quote: letters, digits, _ $ . - (at most 64), not starting with a digit. */
export function isNameLike(key: string): boolean {
  return /^[A-Za-z_$][\w$.-]{0,63}$/.test(key);
}
