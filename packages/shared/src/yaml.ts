import type { Document, LineCounter } from 'yaml';
import { ExitCode } from './exit-codes.js';
import { OpsError } from './errors.js';
import { fileFix, fileProblem } from './file-errors.js';
import { readLocalFile, type LocalFileOptions } from './local-file.js';
import { formatSize } from './size.js';

/**
 * The one YAML reader of the CLI and the mock (src/core/yaml.ts keeps this path for the CLI): the yaml
 * library is loaded here, on first use only (it is not in the start-up path of a command that reads no
 * YAML); every text is parsed under the limits below, and every syntax error is said in opsctl's words
 * (the line, the column and what was expected, never the text: a file may hold secrets). Callers keep
 * their own schema checks and messages. The simulated member (packages/etcd-sim) is a program of its
 * own and imports yaml statically.
 */
export type Yaml = typeof import('yaml');

/**
 * The largest YAML text opsctl parses. The yaml library builds a document model that costs 70 to 300
 * times the text's size in memory (measured on the built binary, `--dry-run`: 1 MB of tracker YAML
 * peaked at 156 MB, 194 KB of labels YAML at 110 MB), so YAML is read up to 128 KiB, which keeps an
 * apply under DESIGN's 100 MB budget; a larger file is written as JSON.
 */
export const YAML_MAX_BYTES = 128 * 1024;

/** The deepest nesting read (an apply file nests 5 levels, an etcd config 3): the parser recurses per level, and 5,000 `[` crashed it. */
export const YAML_MAX_DEPTH = 64;

/** The most aliases one text may expand (a "billion laughs" file is a few lines that expand to gigabytes). */
export const YAML_MAX_ALIASES = 100;

let loaded: Promise<Yaml> | undefined;

/** The yaml library (CommonJS when bundled: its exports may sit on `default`). */
export function yamlLib(): Promise<Yaml> {
  loaded ??= import('yaml').then((mod: Yaml & { default?: Yaml }) => (typeof mod.parseDocument === 'function' ? mod : mod.default!));
  return loaded;
}

/** YAML text opsctl does not read: its message says where and what was expected, or which limit it passes; `code` is the yaml library's error code or YAML_TOO_BIG, YAML_TOO_DEEP, YAML_TOO_MANY_ALIASES. */
export class YamlTextError extends Error {
  override readonly name = 'YamlTextError';
  constructor(
    message: string,
    readonly code: string,
    /** Where it failed (1-based), as the yaml library's own errors carry it. */
    readonly linePos?: Array<{ line: number; col: number }>,
  ) {
    super(message);
  }
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

/** "line L, column C: expected …" for one of the yaml library's error codes, never a character of the text. */
export function yamlProblemText(code: string, at: { line: number; col: number }): string {
  return `line ${at.line}, column ${at.col}: expected ${YAML_PROBLEMS[code] ?? code.toLowerCase().replace(/_/g, ' ')}`;
}

const tooDeep = (at?: Array<{ line: number; col: number }>) =>
  new YamlTextError(
    `${at?.[0] ? `line ${at[0].line}, column ${at[0].col}: ` : ''}nested deeper than ${YAML_MAX_DEPTH} levels, the most opsctl reads`,
    'YAML_TOO_DEEP',
    at,
  );

/**
 * YAML text as the yaml library's Document (comments and order kept, for a caller that edits it), read
 * under the limits: at most `maxBytes` (default YAML_MAX_BYTES), YAML_MAX_DEPTH levels and one document
 * (`lineCounter`, when given, learns the text's lines: a caller's own messages name a line).
 * Throws a YamlTextError on the first syntax error or limit passed, before anything is built from it.
 */
export async function parseYamlDocument(text: string, opts: { maxBytes?: number; lineCounter?: LineCounter } = {}): Promise<Document.Parsed> {
  const max = opts.maxBytes ?? YAML_MAX_BYTES;
  const bytes = Buffer.byteLength(text);
  if (bytes > max)
    throw new YamlTextError(
      `${formatSize(bytes)} of YAML, over the ${formatSize(max)} opsctl reads as YAML (its parser needs 70 to 300 times a text's size in memory)`,
      'YAML_TOO_BIG',
    );
  const y = await yamlLib();
  const lines = opts.lineCounter ?? new y.LineCounter();
  // prettyErrors off: the library's context line quotes the text, and building it for a deep line ran out of memory
  const doc = y.parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const [e] = doc.errors;
  if (e) {
    const at = lines.linePos(e.pos[0]);
    const linePos = [{ line: at.line, col: at.col }];
    if (e.code === 'RESOURCE_EXHAUSTION') throw tooDeep(linePos);
    throw new YamlTextError(yamlProblemText(e.code, at), e.code, linePos);
  }
  // the depth of what was parsed, walked without recursion (the walk itself must not be what overflows)
  const stack: Array<{ node: unknown; depth: number }> = [{ node: doc.contents, depth: 1 }];
  while (stack.length) {
    const { node, depth } = stack.pop()!;
    if (!node || typeof node !== 'object' || !('items' in node) || !Array.isArray(node.items)) continue;
    if (depth > YAML_MAX_DEPTH) {
      const range = (node as { range?: [number, number, number] }).range;
      throw tooDeep(range ? [lines.linePos(range[0])] : undefined);
    }
    for (const item of node.items as unknown[]) {
      if (y.isPair(item)) stack.push({ node: item.key, depth: depth + 1 }, { node: item.value, depth: depth + 1 });
      else stack.push({ node: item, depth: depth + 1 });
    }
  }
  return doc;
}

/** YAML text as plain data (a superset of JSON), read under the limits of parseYamlDocument and YAML_MAX_ALIASES; throws a YamlTextError. */
export async function parseYaml(text: string, opts: { maxBytes?: number } = {}): Promise<unknown> {
  const doc = await parseYamlDocument(text, opts);
  try {
    return doc.toJS({ maxAliasCount: YAML_MAX_ALIASES });
  } catch (err) {
    // the library throws a ReferenceError for an alias to no anchor and for an expansion past maxAliasCount
    if (/excessive alias count/i.test((err as Error).message ?? ''))
      throw new YamlTextError(`its aliases expand past ${YAML_MAX_ALIASES} copies, the most opsctl reads`, 'YAML_TOO_MANY_ALIASES');
    if (err instanceof ReferenceError) throw new YamlTextError(`expected ${YAML_PROBLEMS.BAD_ALIAS}`, 'BAD_ALIAS');
    throw err;
  }
}

/** YAML text as plain data, or undefined when it is not YAML opsctl reads: for text whose reader (etcd, the trial) reports a bad file its own way. */
export async function parseYamlOrUndefined(text: string): Promise<unknown> {
  try {
    return await parseYaml(text);
  } catch {
    return undefined;
  }
}

/** A YAML file that cannot be read as YAML: named with its path, where it failed and what to do (`fix`). */
export class YamlFileError extends OpsError {
  constructor(
    readonly path: string,
    problem: string,
    opts: { what: string; fix: string; exitCode?: LocalFileOptions['exitCode'] },
  ) {
    super(`${opts.what} ${path} ${problem}`, opts.exitCode ?? ExitCode.failure, { code: 'yaml_file', hint: opts.fix });
  }
}

/**
 * A local YAML (or JSON) file's data: read under local-file's rules (a regular file under `maxBytes`,
 * else a LocalFileError naming it), parsed, and refused as a YamlFileError naming the file and, in
 * plain words, what is wrong: it cannot be read ("does not exist", with the fix), or where it is not
 * YAML opsctl reads (`fix`).
 */
export async function readYamlFile(path: string, opts: LocalFileOptions & { fix: string }): Promise<unknown> {
  let text: string;
  try {
    text = await readLocalFile(path, opts);
  } catch (err) {
    if (err instanceof OpsError) throw err;
    throw new YamlFileError(path, fileProblem(err), { what: opts.what, fix: fileFix(err, path) ?? opts.fix, exitCode: opts.exitCode });
  }
  try {
    return await parseYaml(text);
  } catch (err) {
    if (!(err instanceof YamlTextError)) throw err;
    throw new YamlFileError(path, `is not valid YAML (${err.message})`, { what: opts.what, fix: opts.fix, exitCode: opts.exitCode });
  }
}
