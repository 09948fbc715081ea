import { readLocalFile } from '../../core/local-file.js';
import type { Context } from '../../context.js';
import { ApiError, UsageError } from '../../core/errors.js';
import type { CommandResult } from '../../core/output.js';
import { parseUserUrl, URL_EXAMPLE } from '../../core/url.js';
import { jsonSyntaxText } from '../../core/syntax-error.js';

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
  if (/^https?:\/\//.test(opts.path)) {
    // A full URL must stay on the service's own origin: the request carries that service's credentials.
    const target = parseUserUrl(opts.path, '<path>', {
      hint: `give a path like /media/v3/channels, or a full URL on the ${opts.service} service like ${URL_EXAMPLE}`,
    });
    const base = new URL((await ctx.endpoint(opts.service)).url);
    if (target.origin !== base.origin) {
      throw new UsageError(`path: ${target.origin} is not the ${opts.service} service (${base.origin}); opsctl api sends its credentials only there`, {
        field: 'path',
        hint: `give a path like /media/v3/channels, or pick the service the URL belongs to with --service`,
      });
    }
  }
  // keys the user typed: no inherited names (-f __proto__=x is a field like any other, not a prototype)
  const params = Object.create(null) as Record<string, string>;
  for (const f of opts.fields) {
    const eq = f.indexOf('=');
    if (eq <= 0) throw new UsageError(`-f: "${f}" is not key=value`, { field: 'field', hint: 'write it like -f part=snippet' });
    params[f.slice(0, eq)] = f.slice(eq + 1);
  }
  const bodyMethod = !['GET', 'DELETE'].includes(opts.method);
  let json: unknown;
  if (opts.input !== undefined) {
    if (!bodyMethod) throw new UsageError(`--input: a ${opts.method} request has no body`, { field: 'input', hint: 'add -X POST (or PUT/PATCH)' });
    const text =
      opts.input === '-'
        ? await ctx.io.readStdin()
        : await readLocalFile(opts.input, { what: '--input:', exitCode: 2 }).catch((err: Error) => {
            if (err instanceof UsageError) throw err;
            throw new UsageError(`--input: cannot read ${opts.input}: ${err.message}`, { field: 'input' });
          });
    try {
      json = JSON.parse(text);
    } catch {
      throw new UsageError(`--input: ${opts.input === '-' ? 'stdin' : opts.input} is not valid JSON: ${jsonSyntaxText(text)}`, {
        field: 'input',
        hint: 'fix it at that line and column; nothing was sent',
      });
    }
    if (opts.fields.length) {
      if (!json || typeof json !== 'object' || Array.isArray(json))
        throw new UsageError('-f with --input needs the input to be a JSON object', { field: 'field' });
      for (const [k, v] of Object.entries(params)) Object.defineProperty(json, k, { value: v, enumerable: true, writable: true, configurable: true });
    }
  } else if (bodyMethod && opts.fields.length) json = params;

  const http = await ctx.http(opts.service);
  const send = () => http.request({ method: opts.method, path: opts.path, query: bodyMethod ? undefined : params, json });
  try {
    let res;
    try {
      res = await send();
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 401 && opts.service !== 'tracker' && !ctx.env.OPSCTL_ACCESS_TOKEN)) throw err;
      // The server refused a stored token that looked valid (revoked elsewhere, clock skew): refresh once and retry.
      // A refresh that fails with invalid_grant is an AuthError (exit 4) saying to run opsctl login.
      const { freshAccessToken } = await import('../../auth/session.js');
      ctx.debug('[api] 401 with the stored access token: refreshing it and retrying once');
      await freshAccessToken(ctx, { force: true });
      res = await send();
    }
    return { data: res.data ?? null, text: res.data === undefined ? '' : JSON.stringify(res.data, null, 2) };
  } catch (err) {
    if (err instanceof ApiError && err.body !== undefined && !ctx.jsonOutput)
      ctx.io.out(ctx.io.safeOut(typeof err.body === 'string' ? err.body : JSON.stringify(err.body, null, 2)));
    if (err instanceof ApiError && err.status === 401) {
      throw withHint(
        err,
        opts.service === 'tracker'
          ? 'check the tracker token: opsctl auth login --service tracker --with-token < token.txt   (or OPSCTL_TRACKER_TOKEN)'
          : ctx.env.OPSCTL_ACCESS_TOKEN
            ? 'the server refused OPSCTL_ACCESS_TOKEN: get a new token, or unset it to use the sign-in of opsctl login'
            : 'run: opsctl login',
      );
    }
    if (err instanceof ApiError && err.status === 403 && opts.service !== 'tracker') {
      const disabled = serviceDisabled(err.body);
      if (disabled) {
        throw withHint(
          err,
          `the API is not enabled for the project of the client you signed in with: enable it${disabled.url ? ` at ${disabled.url}` : ' in the developer console'}, wait a few minutes, and retry (signing in again does not help)`,
        );
      }
      throw withHint(
        err,
        'the token may lack a scope this call needs: see the missing scopes in opsctl auth status, then grant them with opsctl login --scopes …',
      );
    }
    throw err;
  }
}

/** Google's "API not enabled for the project" answer (reason accessNotConfigured / ErrorInfo SERVICE_DISABLED), with its activation URL. */
function serviceDisabled(body: unknown): { url?: string } | undefined {
  const e = (
    body as
      | {
          error?: {
            errors?: Array<{ reason?: unknown; extendedHelp?: unknown }>;
            details?: Array<{ reason?: unknown; metadata?: { activationUrl?: unknown } }>;
          };
        }
      | undefined
  )?.error;
  if (!e || typeof e !== 'object') return undefined;
  const info = Array.isArray(e.details) ? e.details.find((d) => d?.reason === 'SERVICE_DISABLED') : undefined;
  const item = Array.isArray(e.errors) ? e.errors.find((x) => x?.reason === 'accessNotConfigured') : undefined;
  if (!info && !item) return undefined;
  const url = [info?.metadata?.activationUrl, item?.extendedHelp].find((u): u is string => typeof u === 'string' && /^https:\/\/[^\s]+$/.test(u));
  return { url };
}

/** The same API error (status, body, exit code) with a hint saying what to do next. */
function withHint(err: ApiError, hint: string): ApiError {
  const serverMessage = err.message.replace(/^.*?: HTTP \d+: /, '');
  return new ApiError(err.service, err.status, serverMessage, err.body, { code: err.code, hint, cause: err });
}
