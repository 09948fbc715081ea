import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { durationFlag, parseDuration, parseGoDuration } from '../../src/core/duration.js';
import { parseRate } from '../../src/core/pacer.js';
import { OpsError } from '../../src/core/errors.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

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

  it("a rate's window is written in it, its unit required: 200/1m, 5/500ms", () => {
    expect(parseRate('200/1m')).toEqual({ limit: 200, windowMs: 60_000 });
    expect(parseRate(' 5/500ms ')).toEqual({ limit: 5, windowMs: 500 });
    for (const bad of ['200', '200/60', '200/1.5m', '200/1d', 'x/1m']) expect(parseRate(bad), bad).toBeUndefined();
  });
});

/** The error a flag's bad value gets, as the user sees it (message, exit code, field, hint). */
function refusal(f: () => unknown): { message: string; exitCode: number; field?: string; hint?: string } {
  try {
    f();
  } catch (err) {
    const e = err as OpsError;
    expect(e).toBeInstanceOf(OpsError);
    return { message: e.message, exitCode: e.exitCode, field: e.field, hint: e.hint };
  }
  throw new Error('no error');
}

describe("parseGoDuration: Go's syntax, as etcd reads its config file and etcdctl its ETCDCTL_* variables", () => {
  it('reads every Go unit, sums, fractions and a bare 0; nothing else', () => {
    expect(parseGoDuration('1m30s')).toBe(90_000);
    expect(parseGoDuration('1.5h')).toBe(5_400_000);
    expect(parseGoDuration('500ms')).toBe(500);
    expect(parseGoDuration('1500us')).toBe(2);
    expect(parseGoDuration('2000000ns')).toBe(2);
    expect(parseGoDuration('3µs')).toBe(0);
    expect(parseGoDuration('0')).toBe(0);
    for (const bad of ['', '90', '1d', '1 h', '-1s', 'soon']) expect(parseGoDuration(bad), bad).toBeUndefined();
  });
});

describe('durationFlag: every duration flag, one error', () => {
  it('gives milliseconds in the flag’s unit for a bare number', () => {
    expect(durationFlag('--request-timeout', '3s')).toBe(3000);
    expect(durationFlag('--request-timeout', '250')).toBe(250);
    expect(durationFlag('--timeout', '90', { bare: 's' })).toBe(90_000);
    expect(durationFlag('--wait', '0', { bare: 's' })).toBe(0);
  });

  it('a bad value: exit 2 naming the flag, the value and the forms, in the flag’s unit', () => {
    expect(refusal(() => durationFlag('--stale-after', 'soon'))).toEqual({
      message: '--stale-after: "soon" is not a duration',
      exitCode: 2,
      field: '--stale-after',
      hint: 'write it as 500ms, 30s, 2m or 1.5h (a bare number counts milliseconds)',
    });
    expect(refusal(() => durationFlag('--wait', '5 min', { bare: 's' })).hint).toBe('write it as 500ms, 30s, 2m or 1.5h (a bare number counts seconds)');
  });

  it('a flag that needs more than nothing refuses zero, and says so', () => {
    expect(durationFlag('--timeout', '0.5s', { bare: 's', positive: true })).toBe(500);
    expect(refusal(() => durationFlag('--timeout', '0', { bare: 's', positive: true })).message).toBe('--timeout: "0" is not a duration above zero');
    expect(refusal(() => durationFlag('--s3-timeout', '0s', { positive: true })).field).toBe('--s3-timeout');
  });
});

/** Files that may hold a regexp of duration units, and why. */
const ALLOWED: Record<string, string> = {
  'src/core/duration.ts': "the one parser: opsctl's flags, and Go's syntax as etcd and etcdctl read it",
};

const UNITS = new Set(['ns', 'us', 'µs', 'ms', 's', 'm', 'h', 'd']);

/** Whether a regexp's source reads duration units: a group of unit alternatives ((ms|s|m), (?:s|m|h)) or a class of unit letters ([smh]). */
export function readsDurationUnits(source: string): boolean {
  for (const g of source.matchAll(/\((?:\?:)?([^()]*)\)/g)) {
    const alts = (g[1] ?? '').split('|');
    if (alts.filter((a) => UNITS.has(a)).length >= 2) return true;
  }
  return [...source.matchAll(/\[([a-z]+)\]/g)].some((c) => /^[smhd]{2,4}$/.test(c[1] ?? ''));
}

/** Every regexp (a literal, or new RegExp / RegExp of a string) in TEXT that reads duration units, as `file:line`. */
export function durationRegexps(text: string, name: string): string[] {
  const sf = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const at = (n: ts.Node) => out.push(`${name}:${sf.getLineAndCharacterOfPosition(n.getStart()).line + 1}`);
  const visit = (n: ts.Node) => {
    if (ts.isRegularExpressionLiteral(n) && readsDurationUnits(n.text.slice(1, n.text.lastIndexOf('/')))) at(n);
    if ((ts.isNewExpression(n) || ts.isCallExpression(n)) && n.expression.getText() === 'RegExp') {
      const first = n.arguments?.[0];
      if (first && ts.isStringLiteralLike(first) && readsDurationUnits(first.text)) at(n);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/** Text that may hold such a regexp: a unit beside a `|`, or a class of unit letters. */
const MAYBE = /(?:^|[^\w])(?:ns|us|µs|ms|s|m|h|d)\||\|(?:ns|us|µs|ms|s|m|h|d)(?:[^\w]|$)|\[[smhd]{2,4}\]/m;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

describe('one duration parser (issue 46): no other regexp of duration units in src/ or the packages', () => {
  it('finds one, in any of its forms (the check itself works)', () => {
    const text = [
      'const a = /^(\\d+)(ms|s|m|h)?$/;',
      "const b = new RegExp('^(\\\\d+)(?:s|m|h)$');",
      'const c = /^\\d+[smh]$/i;',
      "const d = RegExp('(h|m)');",
      // not durations: a method, a flag's letter, words, one unit alone
      'const e = /^(GET|POST)$/;',
      'const f = /^-(m|v)$/; const g = /(ms)/; const h = /[abc]/; const i = /(seconds|minutes)/;',
    ].join('\n');
    expect(durationRegexps(text, 'x.ts')).toEqual(['x.ts:1', 'x.ts:2', 'x.ts:3', 'x.ts:4']);
    // and the quick look before parsing lets each of them through
    for (const line of text.split('\n').slice(0, 4)) expect(MAYBE.test(line), line).toBe(true);
  });

  it('src/ and the packages parse durations in core/duration.ts only', () => {
    const found = ['src', 'packages/shared/src', 'packages/mock/src', 'packages/etcd-sim/src'].flatMap((d) =>
      files(join(ROOT, d)).flatMap((f) => {
        const text = readFileSync(f, 'utf8');
        // parsed only where a unit stands beside a | or in a class (parsing every file would take seconds)
        return MAYBE.test(text) ? durationRegexps(text, relative(ROOT, f).split(sep).join('/')) : [];
      }),
    );
    const where = [...new Set(found.map((f) => f.replace(/:\d+$/, '')))];
    expect(where.filter((f) => !(f in ALLOWED))).toEqual([]);
    // the parser itself is found (the scan reads what it should)
    expect(where).toContain('src/core/duration.ts');
  });
});
