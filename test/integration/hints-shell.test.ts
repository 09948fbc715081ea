import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { shellWord } from '../../src/core/hints.js';

// a real sh reads the quoted word back (a child process: the integration tier)
describe('shellWord', () => {
  it('is what sh reads back as one word, for every character 1–255 (sent as UTF-8)', () => {
    const values = ['plain', 'a b', "it's", '$(touch x)', '`x`', 'a\nb', '--flag', '', String.fromCharCode(...Array.from({ length: 255 }, (_, i) => i + 1))];
    for (const v of values) {
      expect(execFileSync('sh', ['-c', `printf %s ${shellWord(v)}`], { encoding: 'utf8' })).toBe(v);
    }
  });
});
