import { readFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import type { Context } from '../context.js';
import { UsageError } from '../core/errors.js';

/**
 * The text of a `-f/--file` flag: stdin for `-`, else the file (relative to the working directory).
 * An unreadable file is bad input naming the flag, the file and its error code; `what` says what the
 * file should be ("a YAML or JSON file").
 */
export async function readFileFlag(file: string, ctx: Context, what: string): Promise<string> {
  if (file === '-') return ctx.io.readStdin();
  const path = isAbsolute(file) ? file : join(ctx.cwd, file);
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new UsageError(`--file: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { field: 'file', hint: `give the path of ${what}, or - for stdin` });
  }
}
