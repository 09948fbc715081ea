import { readFile } from 'node:fs/promises';
import type { Context } from '../../context.js';
import { ApiError, UsageError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';

export interface ApiOptions {
  path: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  fields: string[];
  input?: string;
  service: 'api' | 'labels' | 'tracker';
}

/** `opsctl api PATH`: one authenticated request; the JSON answer pretty-printed on stdout (errors too, then a non-zero exit). */
export async function run(opts: ApiOptions, ctx: Context): Promise<CommandResult> {
  if (!opts.path.startsWith('/') && !/^https?:\/\//.test(opts.path)) {
    throw new UsageError(`path: "${opts.path}" must start with / (e.g. /media/v3/channels)`, { field: 'path' });
  }
  const params: Record<string, string> = {};
  for (const f of opts.fields) {
    const eq = f.indexOf('=');
    if (eq <= 0) throw new UsageError(`-f: "${f}" is not key=value`, { field: 'field', hint: 'write it like -f part=snippet' });
    params[f.slice(0, eq)] = f.slice(eq + 1);
  }
  const bodyMethod = !['GET', 'DELETE'].includes(opts.method);
  let json: unknown;
  if (opts.input !== undefined) {
    if (!bodyMethod) throw new UsageError(`--input: a ${opts.method} request has no body`, { field: 'input', hint: 'add -X POST (or PUT/PATCH)' });
    const text = opts.input === '-' ? await ctx.io.readStdin() : await readFile(opts.input, 'utf8').catch((err: Error) => {
      throw new UsageError(`--input: cannot read ${opts.input}: ${err.message}`, { field: 'input' });
    });
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new UsageError(`--input: ${opts.input} is not valid JSON (${(err as Error).message})`, { field: 'input' });
    }
    if (opts.fields.length) {
      if (!json || typeof json !== 'object' || Array.isArray(json)) throw new UsageError('-f with --input needs the input to be a JSON object', { field: 'field' });
      Object.assign(json as object, params);
    }
  } else if (bodyMethod && opts.fields.length) json = params;

  const http = await ctx.http(opts.service);
  try {
    const res = await http.request({ method: opts.method, path: opts.path, query: bodyMethod ? undefined : params, json });
    return { data: res.data ?? null, text: res.data === undefined ? '' : JSON.stringify(res.data, null, 2) };
  } catch (err) {
    if (err instanceof ApiError && err.body !== undefined && !ctx.jsonOutput) ctx.io.out(typeof err.body === 'string' ? err.body : JSON.stringify(err.body, null, 2));
    throw err;
  }
}
