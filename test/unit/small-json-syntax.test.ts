import { describe, expect, it } from 'vitest';
import { jsonSyntaxProblem, jsonSyntaxText, syntaxErrorText } from '../../src/core/syntax-error.js';

/** Issue 27, item 10b: the JSON error position finder agrees with JSON.parse, and says nothing of the text. */
describe('jsonSyntaxProblem', () => {
  it('finds a problem exactly when JSON.parse fails (random mutations of valid documents)', () => {
    const docs = ['{"a": [1, 2.5e3, "x\\n\\u00e9", true, null], "b": {"c": false}}', '[]', '"s"', '-0.1', '{"k": {"l": [[{}]]}}'];
    const alphabet = ['{', '}', '[', ']', ',', ':', '"', '\\', 'a', '1', '-', '.', 'e', ' ', '\n', '\u0001', 't', 'n', 'u'];
    let seed = 42;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let round = 0; round < 5000; round++) {
      let text = docs[rand(docs.length)]!;
      for (let k = rand(3) + 1; k > 0; k--) {
        const at = rand(text.length + 1);
        const op = rand(3);
        const ch = alphabet[rand(alphabet.length)]!;
        text =
          op === 0 ? text.slice(0, at) + ch + text.slice(at) : op === 1 ? text.slice(0, at) + text.slice(at + 1) : text.slice(0, at) + ch + text.slice(at + 1);
      }
      let valid = true;
      try {
        JSON.parse(text);
      } catch {
        valid = false;
      }
      expect(jsonSyntaxProblem(text) === undefined, JSON.stringify(text)).toBe(valid);
    }
  });

  it('says the line, column and what was expected', () => {
    expect(jsonSyntaxText('{"a": 1,\n "b" 2}')).toBe("line 2, column 6: expected ':' after a property name");
    expect(jsonSyntaxText('[1, 2')).toBe("line 1, column 6: expected ',' or ']' after an array element");
    expect(jsonSyntaxText('{"a": "open')).toBe('line 1, column 7: expected a closing " (the string that starts here is not terminated)');
    expect(jsonSyntaxText('{} x')).toBe('line 1, column 4: expected the end of the document (JSON holds one value)');
  });

  it("never quotes the text of a parser's error", () => {
    const text = 'root:$6$SECRET:1:::';
    let err: unknown;
    try {
      JSON.parse(text);
    } catch (e) {
      err = e;
    }
    expect(syntaxErrorText(err, text)).not.toContain('SECRET');
    expect(
      syntaxErrorText(Object.assign(new Error('Unexpected "SECRET" at line 1, column 2'), { code: 'UNEXPECTED_TOKEN', linePos: [{ line: 1, col: 2 }] })),
    ).toBe('line 1, column 2: expected a key, value or list item here (indentation or a stray character?)');
  });
});
