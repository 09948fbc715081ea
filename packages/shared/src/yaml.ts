import { ExitCode } from './exit-codes.js';
import { OpsError } from './errors.js';
import { readLocalFile, type LocalFileOptions } from './local-file.js';

/**
 * The one YAML reader of the CLI and the mock (src/core/yaml.ts keeps this path for the CLI): the yaml
 * library is loaded here, on first use only (it is not in the start-up path of a command that reads no
 * YAML), and every file of YAML is read through local-file's rules (a regular file, a size cap).
 * The simulated member (packages/etcd-sim) is a program of its own and imports yaml statically.
 */
export type Yaml = typeof import('yaml');

let loaded: Promise<Yaml> | undefined;

/** The yaml library (CommonJS when bundled: its exports may sit on `default`). */
export function yamlLib(): Promise<Yaml> {
  loaded ??= import('yaml').then((mod: Yaml & { default?: Yaml }) => (typeof mod.parseDocument === 'function' ? mod : mod.default!));
  return loaded;
}

/** YAML text as plain data (a superset of JSON); throws the library's own error (a YAMLParseError with its line) on bad YAML. */
export async function parseYaml(text: string): Promise<unknown> {
  return (await yamlLib()).parse(text);
}

/** YAML text as plain data, or undefined when it is not YAML: for text whose reader (etcd, the trial) reports a bad file its own way. */
export async function parseYamlOrUndefined(text: string): Promise<unknown> {
  try {
    return await parseYaml(text);
  } catch {
    return undefined;
  }
}

/** Where the yaml library says a parse failed ("line L, column C"), never the text around it (a file may hold secrets). */
export function yamlErrorPlace(err: unknown): string | undefined {
  const pos = (err as { linePos?: Array<{ line: number; col: number }> }).linePos?.[0];
  return pos ? `line ${pos.line}, column ${pos.col}` : undefined;
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
 * else a LocalFileError naming it), parsed, and refused as a YamlFileError naming the file, the line and
 * column of the error and `fix` when it is not YAML. File system errors (ENOENT, EACCES…) are thrown as they are.
 */
export async function readYamlFile(path: string, opts: LocalFileOptions & { fix: string }): Promise<unknown> {
  const text = await readLocalFile(path, opts);
  try {
    return await parseYaml(text);
  } catch (err) {
    const place = yamlErrorPlace(err);
    throw new YamlFileError(path, `is not valid YAML${place ? ` (${place})` : ''}`, { what: opts.what, fix: opts.fix, exitCode: opts.exitCode });
  }
}
