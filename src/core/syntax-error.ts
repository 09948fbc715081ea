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

/** The yaml library's error codes, said without quoting the text (its own messages show the line). */
const YAML_PROBLEMS: Record<string, string> = {
  ALIAS_PROPS: 'an alias cannot have a tag or anchor',
  BAD_ALIAS: 'an alias to an anchor defined earlier',
  BAD_COLLECTION_TYPE: 'a collection of the type its tag names',
  BAD_DIRECTIVE: 'a valid %YAML or %TAG directive',
  BAD_DQ_ESCAPE: 'a valid escape in a double-quoted string',
  BAD_INDENT: 'an indentation that lines up with its siblings',
  BAD_PROP_ORDER: 'the anchor and tag before the value',
  BAD_SCALAR_START: 'a value that does not start with a reserved character (quote it)',
  BLOCK_AS_IMPLICIT_KEY: 'a key that is not a nested block (a key must be a scalar on one line)',
  BLOCK_IN_FLOW: 'no block value inside a flow collection ({…} or […])',
  DUPLICATE_KEY: 'each key once per mapping (this key appears twice)',
  KEY_OVER_1024_CHARS: 'an implicit key under 1024 characters',
  MISSING_CHAR: 'a closing quote, bracket or separator (, or :)',
  MULTILINE_IMPLICIT_KEY: 'a key on one line',
  MULTIPLE_ANCHORS: 'one anchor per value',
  MULTIPLE_DOCS: 'one YAML document (no second ---)',
  MULTIPLE_TAGS: 'one tag per value',
  NON_STRING_KEY: 'a string key',
  TAB_AS_INDENT: 'spaces for indentation, not tabs',
  TAG_RESOLVE_FAILED: 'a value of the type its tag names',
  UNEXPECTED_TOKEN: 'a key, value or list item here (indentation or a stray character?)',
};

/**
 * "line L, column C: expected …" for a parser's error (the yaml library's, a CSV parser's, JSON.parse's
 * when `text` is given), without quoting any of the text; a parser error of unknown shape is named by
 * its kind only.
 */
export function syntaxErrorText(err: unknown, text?: string): string {
  const e = err as { name?: unknown; code?: unknown; linePos?: Array<{ line: number; col: number }>; lines?: unknown; message?: unknown };
  if (err instanceof SyntaxError && text !== undefined) return jsonSyntaxText(text);
  const code = typeof e?.code === 'string' ? e.code : undefined;
  const pos = e?.linePos?.[0];
  if (pos && code) return `line ${pos.line}, column ${pos.col}: expected ${YAML_PROBLEMS[code] ?? code.toLowerCase().replace(/_/g, ' ')}`;
  if (code?.startsWith('CSV_')) {
    const what = code.slice(4).toLowerCase().replace(/_/g, ' ');
    return `${typeof e.lines === 'number' ? `line ${e.lines}: ` : ''}${what}`;
  }
  if (code === 'ERR_MAX_ALIAS_COUNT' || (typeof e?.message === 'string' && /alias/i.test(e.message))) return 'too many or unresolved aliases';
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
