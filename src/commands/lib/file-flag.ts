import { isAbsolute, join } from 'node:path';
import type { Context } from '../../context.js';
import { OpsError, UsageError } from '../../core/errors.js';
import { readLocalFile } from '../../core/local-file.js';
import { refuseKernelFile } from '../../core/kernel-path.js';
import { fileFix, fileProblem } from '../../core/file-errors.js';

/**
 * The text of a `-f/--file` flag: stdin for `-`, else the file (relative to the working directory).
 * An unreadable file is bad input naming the flag, the file and, in plain words, what is wrong with it
 * ("does not exist", "permission denied"); `what` says what the file should be ("a YAML or JSON file").
 * A path that leads under /proc, /sys or /dev is refused. `flag` names the flag in messages (`--file`);
 * `forms` ends each hint with the ways to give it.
 */
export async function readFileFlag(
  file: string,
  ctx: Context,
  what: string,
  flag = '--file',
  forms = `give the path of ${what}, or - for stdin`,
): Promise<string> {
  if (file === '-') return ctx.io.readStdin();
  const path = isAbsolute(file) ? file : join(ctx.cwd, file);
  try {
    // /proc/self/environ reads as a file and holds opsctl's own tokens (a kv put would store them)
    await refuseKernelFile(path, file, { what: flag, field: flag.replace(/^-+/, ''), hint: forms });
    return await readLocalFile(path, { what: `${flag}:`, exitCode: 2, hint: forms });
  } catch (err) {
    if (err instanceof OpsError) throw err;
    const fix = fileFix(err, file);
    throw new UsageError(`${flag}: ${file} ${fileProblem(err)}`, {
      field: flag.replace(/^-+/, ''),
      hint: `${fix ? `${fix}; ` : ''}${forms}`,
    });
  }
}

/** `--data @FILE`'s file, read as every file flag reads one (the messages name `--data` and its forms). */
export function dataFileReader(ctx: Context, forms: string): (path: string) => Promise<string> {
  return (path) => readFileFlag(path, ctx, 'a JSON object', '--data', forms);
}
