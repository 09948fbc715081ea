import { describe, expect, it } from 'vitest';
import { withProfileFlag } from '../../src/core/hints.js';

describe('withProfileFlag', () => {
  it('adds --profile to every command of a profile noun, before a redirect or a parenthesis', () => {
    expect(withProfileFlag('run: opsctl auth store-token --service tracker --with-token < token.txt   (or set OPSCTL_TRACKER_TOKEN)', 'work')).toBe(
      'run: opsctl auth store-token --service tracker --with-token --profile work < token.txt   (or set OPSCTL_TRACKER_TOKEN)',
    );
    expect(withProfileFlag('check the id: opsctl tracker labels list', 'work')).toBe('check the id: opsctl tracker labels list --profile work');
    expect(withProfileFlag('sign in again: opsctl login (OAuth) or opsctl auth status, then opsctl labels list', 'a b')).toBe(
      "sign in again: opsctl login --profile 'a b' (OAuth) or opsctl auth status --profile 'a b', then opsctl labels list --profile 'a b'",
    );
  });

  it('leaves a hint alone without a --profile flag, a command that names a profile already, and nouns without profiles', () => {
    expect(withProfileFlag('run: opsctl login', undefined)).toBe('run: opsctl login');
    expect(withProfileFlag('run: opsctl config set tracker https://… --profile NAME', 'work')).toBe('run: opsctl config set tracker https://… --profile NAME');
    expect(withProfileFlag('then: opsctl kv rollback; or opsctl mock serve', 'work')).toBe('then: opsctl kv rollback; or opsctl mock serve');
    expect(withProfileFlag('opsctl keeps using it', 'work')).toBe('opsctl keeps using it');
  });
});
