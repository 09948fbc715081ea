import { jsonSyntaxText, syntaxErrorText } from './syntax-error.js';
import { parseYaml, YAML_MAX_BYTES } from './yaml.js';
import { formatSize } from '@opsctl/shared/size.js';

/** The largest JSON apply file: the 16 MiB cap of every file (parsed natively at about 3 times its size; a 15.7 MB tracker apply peaks 7.5 times its size above its baseline). */
export const JSON_MAX_BYTES = 16 * 1024 * 1024;

/** A file's text that is neither JSON nor YAML opsctl reads: `problem` names the line and column, never the content. */
export class TextProblem extends Error {
  constructor(
    message: string,
    /** What to do about a file refused for its size (a syntax error's fix is the caller's hint). */
    readonly hint?: string,
  ) {
    super(message);
  }
}

/**
 * An apply file's data: JSON when it looks like JSON (whatever its name), else YAML (a superset of JSON)
 * under YAML_MAX_BYTES, read by the one YAML reader (core/yaml.ts: its limits, its words for a syntax error). `jsonMaxBytes` is the command's own cap for JSON (what its planner can hold
 * within the memory budget). Throws a TextProblem saying what is wrong and where, or how big the file
 * is, its cap and the way out (split it, or write it as JSON), before anything is built from it.
 */
export async function parseJsonOrYaml(text: string, opts: { jsonMaxBytes?: number } = {}): Promise<unknown> {
  const jsonMax = opts.jsonMaxBytes ?? JSON_MAX_BYTES;
  const bytes = Buffer.byteLength(text);
  const looksJson = /^\s*[[{]/.test(text);
  if (looksJson && bytes > jsonMax) {
    throw new TextProblem(
      `is ${formatSize(bytes)} of JSON: this command reads apply files up to ${formatSize(jsonMax)} (what it can plan within its 100 MB memory budget)`,
      `split it into files under ${formatSize(jsonMax)} and apply each; nothing was sent`,
    );
  }
  if (!looksJson && bytes > YAML_MAX_BYTES) throw yamlTooBig(bytes, jsonMax);
  const dense = denseText(text, bytes, { json: looksJson });
  if (dense) throw new TextProblem(dense, 'split it into files of fewer entries and apply each; nothing was sent');
  if (looksJson) {
    try {
      return JSON.parse(text);
    } catch {
      // a large file that looks like JSON is judged as JSON: YAML would take minutes to say the same
      if (bytes > YAML_MAX_BYTES) throw new TextProblem(`not valid JSON: ${jsonSyntaxText(text)}`);
    }
  }
  if (bytes > YAML_MAX_BYTES) throw yamlTooBig(bytes, jsonMax);
  try {
    return await parseYaml(text);
  } catch (err) {
    throw new TextProblem(`not valid YAML or JSON: ${syntaxErrorText(err)}`);
  }
}

/** Below this many values a file is never judged dense (the fixed cost is small). */
const DENSE_FLOOR = 10_000;

/**
 * A file's values (about: the `,` `[` `{` outside JSON strings; in YAML every line and flow separator
 * too) costing more than ~10 times its size once parsed: each JSON value costs up to 64 bytes (an empty
 * mapping), each YAML node a few KiB, so JSON with more than one value per 8 bytes and YAML with more
 * than one node per 12 bytes (an apply file has one per 30 to 40) are refused before they are parsed.
 */
function denseText(text: string, bytes: number, { json }: { json: boolean }): string | undefined {
  let values = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (json && inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x2c || c === 0x5b || c === 0x7b || (!json && c === 0x0a)) values++;
    else if (json && c === 0x22) inString = true;
  }
  const per = json ? 8 : 12;
  if (values <= Math.max(DENSE_FLOOR, bytes / per)) return undefined;
  return `is ${formatSize(bytes)} of ${json ? 'JSON' : 'YAML'} holding about ${values} ${json ? 'values' : 'nodes'}, more than one per ${per} bytes (an apply file has one per 30 or more): parsed, it would cost well over 10 times its size in memory`;
}

/** The refusal of a YAML file over YAML_MAX_BYTES: its size, the cap and the ways out. */
function yamlTooBig(bytes: number, jsonMax: number): TextProblem {
  return new TextProblem(
    `is ${formatSize(bytes)} of YAML: YAML files are read up to ${formatSize(YAML_MAX_BYTES)} (the YAML parser needs 70 to 300 times a file's size in memory)`,
    `write it as JSON (read up to ${formatSize(jsonMax)}), e.g. with --json, or split it into files under ${formatSize(YAML_MAX_BYTES)} and apply each; nothing was sent`,
  );
}
