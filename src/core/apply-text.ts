import { jsonSyntaxText, syntaxErrorText } from './syntax-error.js';

/**
 * The largest YAML text opsctl parses. The yaml library builds a document model that costs about 70
 * times the file's size in memory and ~4 s per MB (measured: a 1.8 MB apply file, 130 MB and 6.3 s of
 * parsing; 15 MB took 42 s and 2 GB), so YAML is read up to 1 MiB; JSON, parsed natively at about 3
 * times its size, is read up to the 16 MiB cap of every file.
 */
export const YAML_MAX_BYTES = 1024 * 1024;

/** A file's text that is neither JSON nor YAML opsctl reads: `problem` names the line and column, never the content. */
export class TextProblem extends Error {}

/**
 * An apply file's data: JSON when it looks like JSON (whatever its name), else YAML (a superset of JSON)
 * under YAML_MAX_BYTES. Throws a TextProblem saying what is wrong and where.
 */
export async function parseJsonOrYaml(text: string): Promise<unknown> {
  const bytes = Buffer.byteLength(text);
  if (/^\s*[[{]/.test(text)) {
    try {
      return JSON.parse(text);
    } catch {
      // a large file that looks like JSON is judged as JSON: YAML would take minutes to say the same
      if (bytes > YAML_MAX_BYTES) throw new TextProblem(`not valid JSON: ${jsonSyntaxText(text)}`);
    }
  }
  if (bytes > YAML_MAX_BYTES) {
    throw new TextProblem(
      `is ${(bytes / 1024 / 1024).toFixed(1)} MiB of YAML: YAML files are read up to 1 MiB (the YAML parser needs about 70 times a file's size in memory); write a larger file as JSON (read up to 16 MiB), e.g. with --json`,
    );
  }
  // yaml is CommonJS when bundled: its exports may sit on `default`
  const mod = (await import('yaml')) as typeof import('yaml') & { default?: typeof import('yaml') };
  try {
    return (mod.parse ?? mod.default!.parse)(text);
  } catch (err) {
    throw new TextProblem(`not valid YAML or JSON: ${syntaxErrorText(err)}`);
  }
}
