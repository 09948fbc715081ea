import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/core/duration.js';

describe('parseDuration: the one duration syntax of every flag', () => {
  it('reads ms, s, m and h, fractions, and spaces around', () => {
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('30s')).toBe(30_000);
    expect(parseDuration('2m')).toBe(120_000);
    expect(parseDuration('1.5h')).toBe(5_400_000);
    expect(parseDuration(' 0.5s ')).toBe(500);
    expect(parseDuration('0s')).toBe(0);
  });

  it('a bare number counts in the unit the flag names: milliseconds for kv timeouts, seconds for the login timeout and the mock waits', () => {
    expect(parseDuration('250')).toBe(250);
    expect(parseDuration('90', 's')).toBe(90_000);
    expect(parseDuration('90ms', 's')).toBe(90);
    expect(parseDuration('0.0004', 's')).toBe(0);
  });

  it('anything else is not a duration', () => {
    for (const bad of ['', 'soon', '-1s', '1d', '1 s', '1e3', 's', '1.s', '.5s', '1h30m']) expect(parseDuration(bad), bad).toBeUndefined();
  });
});
