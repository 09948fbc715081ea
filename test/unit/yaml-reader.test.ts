import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { syntaxErrorText } from '../../src/core/syntax-error.js';
import { parseYaml, parseYamlDocument, readYamlFile, YAML_MAX_BYTES, YAML_MAX_DEPTH, YamlFileError, YamlTextError } from '../../src/core/yaml.js';

/** What parseYaml throws for TEXT (fails the test when it parses). */
async function refusal(text: string, opts?: { maxBytes?: number }): Promise<YamlTextError> {
  const err = await parseYaml(text, opts).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(YamlTextError);
  return err as YamlTextError;
}

describe('the one YAML reader (core/yaml.ts)', () => {
  it('reads YAML (and JSON, a subset) as plain data', async () => {
    expect(await parseYaml("a: 'it''s'\nb: [1, {c: 2}]\nd: &x {e: 1}\nf: *x\n")).toEqual({ a: "it's", b: [1, { c: 2 }], d: { e: 1 }, f: { e: 1 } });
    expect(await parseYaml('{"a": [1, 2]}')).toEqual({ a: [1, 2] });
    expect(await parseYaml('')).toBeNull();
  });

  it('says a syntax error in its own words: the line, the column and what was expected, never the text', async () => {
    const err = await refusal('password: SECRET\nclients: [a');
    expect(err.message).toBe('line 2, column 12: expected an indentation that lines up with its siblings');
    expect(err.code).toBe('BAD_INDENT');
    expect(err.linePos).toEqual([{ line: 2, col: 12 }]);
    expect((await refusal('a: 1\na: SECRET\n')).message).toBe('line 2, column 1: expected each key once per mapping (this key appears twice)');
    expect((await refusal('a: SECRET\n---\nb: 2\n')).message).toBe('line 2, column 1: expected one YAML document (no second ---)');
    expect((await refusal('a: *SECRET\n')).message).toBe('expected an alias to an anchor defined earlier');
    for (const text of ['password: SECRET\nclients: [a', 'a: 1\na: SECRET\n', 'a: *SECRET\n']) {
      const e = await refusal(text);
      expect(e.message).not.toContain('SECRET');
      // the callers' messages (`not valid YAML: …`) take the same words
      expect(syntaxErrorText(e)).toBe(e.message);
    }
  });

  it(`refuses text over YAML_MAX_BYTES (${YAML_MAX_BYTES / 1024} KiB) or a caller's cap before parsing it`, async () => {
    const big = 'a: b\n'.repeat(Math.ceil(YAML_MAX_BYTES / 5) + 1);
    const err = await refusal(big);
    expect(err.code).toBe('YAML_TOO_BIG');
    expect(err.message).toMatch(/^\d+ KiB of YAML, over the 128 KiB opsctl reads as YAML/);
    expect((await refusal('a: 1234567890\n', { maxBytes: 8 })).message).toMatch(/over the 8 B opsctl reads/);
  });

  it(`refuses nesting deeper than ${YAML_MAX_DEPTH} levels, flow or block, as an error (5,000 [ crashed the process with the library's pretty errors)`, async () => {
    const flow = await refusal('['.repeat(5000) + ']'.repeat(5000));
    expect(flow.code).toBe('YAML_TOO_DEEP');
    expect(flow.message).toMatch(/^line 1, column \d+: nested deeper than 64 levels, the most opsctl reads$/);
    expect((await refusal('['.repeat(YAML_MAX_DEPTH + 1) + ']'.repeat(YAML_MAX_DEPTH + 1))).code).toBe('YAML_TOO_DEEP');
    const block = Array.from({ length: YAML_MAX_DEPTH + 2 }, (_, i) => `${'  '.repeat(i)}k${i}:`).join('\n');
    expect((await refusal(block)).code).toBe('YAML_TOO_DEEP');
    // at the cap it reads
    expect(await parseYaml('['.repeat(YAML_MAX_DEPTH) + ']'.repeat(YAML_MAX_DEPTH))).toBeInstanceOf(Array);
  });

  it('refuses aliases that expand a small text into a huge value (billion laughs)', async () => {
    const laughs = [
      'a: &a [x,x,x,x,x,x,x,x,x]',
      ...'bcd'.split('').map((k, i) => `${k}: &${k} [${Array(9).fill(`*${'abc'[i]}`).join(',')}]`),
      `e: [${Array(9).fill('*d').join(',')}]`,
    ];
    const err = await refusal(laughs.join('\n'));
    expect(err.code).toBe('YAML_TOO_MANY_ALIASES');
    expect(err.message).toBe('its aliases expand past 100 copies, the most opsctl reads');
  });

  it('gives a caller that edits the text the Document (comments kept) under the same limits, and the lines of its nodes', async () => {
    const { LineCounter } = await import('yaml');
    const lines = new LineCounter();
    const doc = await parseYamlDocument('# kept\nname: kv1\nwal-dir: /w\n', { lineCounter: lines });
    doc.set('name', 'kv2');
    expect(doc.toString()).toBe('# kept\nname: kv2\nwal-dir: /w\n');
    expect(lines.linePos(doc.contents!.range[0]).line).toBe(2);
    await expect(parseYamlDocument('a: [')).rejects.toBeInstanceOf(YamlTextError);
    await expect(parseYamlDocument('['.repeat(5000))).rejects.toMatchObject({ code: 'YAML_TOO_DEEP' });
  });

  describe('readYamlFile: a file, named in every refusal', () => {
    const dir = mkdtempSync(join(tmpdir(), 'opsctl-yaml-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const opts = { what: 'the clients file', fix: 'fix it', exitCode: 2 as const };

    it('reads a file', async () => {
      writeFileSync(join(dir, 'ok.yaml'), 'clients: [a]\n');
      expect(await readYamlFile(join(dir, 'ok.yaml'), opts)).toEqual({ clients: ['a'] });
    });

    it('a file that cannot be read: the file and the problem in plain words, and what to do', async () => {
      const missing = join(dir, 'missing.yaml');
      const err = (await readYamlFile(missing, opts).catch((e: unknown) => e)) as YamlFileError;
      expect(err).toBeInstanceOf(YamlFileError);
      expect(err.message).toBe(`the clients file ${missing} does not exist`);
      expect(err.hint).toBe('check the path (relative paths start from the current directory)');
      expect(err.exitCode).toBe(2);
      mkdirSync(join(dir, 'a-dir.yaml'));
      await expect(readYamlFile(join(dir, 'a-dir.yaml'), opts)).rejects.toThrow(`the clients file ${join(dir, 'a-dir.yaml')} is a directory`);
    });

    it('a file that is not YAML: the file, the line and column, what was expected and the fix', async () => {
      const file = join(dir, 'bad.yaml');
      writeFileSync(file, 'token: SECRET\nclients: [a');
      const err = (await readYamlFile(file, opts).catch((e: unknown) => e)) as YamlFileError;
      expect(err).toBeInstanceOf(YamlFileError);
      expect(err.message).toBe(`the clients file ${file} is not valid YAML (line 2, column 12: expected an indentation that lines up with its siblings)`);
      expect(err.hint).toBe('fix it');
      writeFileSync(file, '['.repeat(5000));
      await expect(readYamlFile(file, opts)).rejects.toThrow(/is not valid YAML \(line 1, column \d+: nested deeper than 64 levels/);
    });

    it('a file over its cap is refused before it is read whole', async () => {
      const file = join(dir, 'big.yaml');
      writeFileSync(file, 'a: b\n'.repeat(100));
      await expect(readYamlFile(file, { ...opts, maxBytes: 100 })).rejects.toThrow(`the clients file ${file} is`);
    });
  });
});
