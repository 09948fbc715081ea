import { STATUS_CODES } from 'node:http';
import type { Context } from '../../context.js';
import { ApiError, UsageError } from '../../core/errors.js';
import type { HttpClient, HttpResponse, Query } from '../../core/http.js';
import { serverMessage } from '../../core/http-body.js';
import type { CommandResult } from '../../core/output.js';
import { redactHeaders } from '../../core/redact.js';
import { parseUserUrl, URL_EXAMPLE } from '../../core/url.js';
import { jsonSyntaxText } from '../../core/syntax-error.js';
import { readFileFlag } from '../lib/file-flag.js';
import { fieldsBody, fieldsQuery, type FieldArg } from './lib/fields.js';
import { nextPage, pageItems } from './lib/paginate.js';
import type { OptionsOf } from '../spec.js';
import type { spec } from './api.spec.js';

export type Options = OptionsOf<typeof spec>;

/** The options with `-f` and `-F` in one list, in the order typed, and the `-H` headers. */
type ApiOptions = Options & { fields: FieldArg[]; headers: string[] };

/** --paginate's hard stop unless --max-pages says otherwise: far past any real list, short of forever. */
const MAX_PAGES = 10_000;

/** Every 4xx and 5xx comes back as a response (after the client's own retries of 429 and 5xx), so -i can show its headers. */
const ERROR_STATUSES = Array.from({ length: 200 }, (_, i) => 400 + i);

/**
 * `opsctl api PATH`: authenticated requests as gh api makes them; the JSON answer pretty-printed on
 * stdout (errors too, then a non-zero exit). Requests go through the service's own client: its pacing,
 * retries of 429/5xx, credentials and redaction.
 */
export async function run(given: Options, ctx: Context): Promise<CommandResult | void> {
  const fields = [...(given.rawField ?? []), ...(given.field ?? [])].sort((a, b) => a.at - b.at).map(({ raw, text }) => ({ raw, text }));
  const opts: ApiOptions = { ...given, fields, headers: given.header ?? [] };
  await checkPath(opts, ctx);
  if (opts.slurp && opts.slurpItems)
    throw new UsageError('--slurp and --slurp-items: give one', {
      field: 'slurp',
      hint: '--slurp gives the pages (as gh), --slurp-items their items in one flat array',
    });
  for (const [given, flag] of [
    [opts.slurp, '--slurp'],
    [opts.slurpItems, '--slurp-items'],
    [opts.maxPages !== undefined, '--max-pages'],
  ] as const)
    if (given && !opts.paginate) throw new UsageError(`${flag} needs --paginate`, { field: flag.slice(2), hint: 'add --paginate to follow the pages' });
  if (opts.paginate && opts.method !== 'GET')
    throw new UsageError(`--paginate: follows the pages of a GET request, not ${opts.method}`, { field: 'paginate', hint: 'drop -X, or drop --paginate' });
  const headers = parseHeaders(opts.headers);
  const stdin = stdinOnce(ctx);
  const read = (source: string, flag: string) => (source === '-' ? stdin(flag) : readFileFlag(source, ctx, 'a file whose text is the value', flag));
  const bodyMethod = !['GET', 'DELETE'].includes(opts.method);
  let json: unknown;
  let query: Query | undefined;
  if (opts.input !== undefined) {
    if (!bodyMethod) throw new UsageError(`--input: a ${opts.method} request has no body`, { field: 'input', hint: 'add -X POST (or PUT/PATCH)' });
    const text = opts.input === '-' ? await stdin('--input') : await readFileFlag(opts.input, ctx, 'a JSON file', '--input');
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
        throw new UsageError('-f/-F with --input needs the input to be a JSON object', { field: 'field' });
      for (const [k, v] of Object.entries(await fieldsBody(opts.fields, read)))
        Object.defineProperty(json, k, { value: v, enumerable: true, writable: true, configurable: true });
    }
  } else if (bodyMethod && opts.fields.length) json = await fieldsBody(opts.fields, read);
  else if (!bodyMethod && opts.fields.length) query = await fieldsQuery(opts.fields, read);

  const http = await ctx.http(opts.service);
  const base = new URL(http.baseUrl);
  let url = http.url(opts.path, query);
  const seen = new Set<string>();
  const items: unknown[] = [];
  for (let page = 1; ; page++) {
    seen.add(url.href);
    const res = await send(opts, http, url, json, headers);
    if (opts.include) ctx.io.out(ctx.io.safeOut(headLines(res)));
    if (res.status >= 400) throw failure(ctx, opts, res);
    const next = opts.paginate ? nextPage(url, res.headers, res.data) : undefined;
    if (!opts.paginate) {
      if (opts.silent) return;
      return { data: res.data ?? null, text: res.data === undefined ? '' : JSON.stringify(res.data, null, 2) };
    }
    if (opts.slurpItems) items.push(...pageItems(res.data));
    else if (opts.slurp) items.push(res.data ?? null);
    else if (!opts.silent && res.data !== undefined) await printPage(ctx, res.data);
    if (!next) break;
    if (next.origin !== base.origin) {
      throw new ApiError(
        opts.service,
        res.status,
        `page ${page} points its next page at ${next.origin}, not the ${opts.service} service (${base.origin})`,
        res.data,
        {
          code: 'pagination',
          hint: 'opsctl api sends its credentials only to the service itself; fetch that page with another tool if you trust it',
        },
      );
    }
    if (page >= (opts.maxPages ?? MAX_PAGES)) {
      throw new ApiError(opts.service, res.status, `--paginate: stopped after ${page} pages (--max-pages ${page}) with a next page still named`, res.data, {
        code: 'pagination',
        hint: 'raise --max-pages if the list really is that long; otherwise the service is paging without end',
      });
    }
    if (seen.has(next.href)) {
      throw new ApiError(opts.service, res.status, `page ${page} names as its next page one already fetched (${next.pathname}${next.search})`, res.data, {
        code: 'pagination',
        hint: 'the service is paging in a loop: stopping here rather than forever',
      });
    }
    ctx.debug(`[api] page ${page} done; next: ${next.pathname}`);
    url = next;
  }
  if ((opts.slurp || opts.slurpItems) && !opts.silent) return { data: items, text: JSON.stringify(items, null, 2) };
}

/**
 * A path on the service, or a full URL on the service's own origin (the request carries that service's
 * credentials). As gh api, a path without its leading `/` (`api media/v3/channels`) is the same path: both
 * are relative to the service's base URL, its own path included.
 */
async function checkPath(opts: ApiOptions, ctx: Context): Promise<void> {
  if (!/^https?:\/\//.test(opts.path)) {
    if (!opts.path.trim()) throw new UsageError('path: give the request path, e.g. /media/v3/channels', { field: 'path' });
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(opts.path))
      throw new UsageError(`path: "${opts.path}" is not an http(s) URL nor a path`, {
        field: 'path',
        hint: 'give a path like /media/v3/channels, or a full http(s) URL on the service',
      });
    if (!opts.path.startsWith('/')) opts.path = `/${opts.path}`;
    return;
  }
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

/** `-H 'Name: value'` as headers (names lower-cased, so one replaces opsctl's own default of that name). */
export function parseHeaders(list: string[]): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  for (const h of list) {
    const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*?)[ \t]*$/.exec(h);
    if (!m || /[\r\n\0]/.test(h)) throw new UsageError(`-H: "${h}" is not a header`, { field: 'header', hint: "write it like -H 'Accept: application/json'" });
    out[(m[1] ?? '').toLowerCase()] = m[2] ?? '';
  }
  return out;
}

/** Stdin is read at most once: `--input -` or one `@-` field. */
function stdinOnce(ctx: Context): (flag: string) => Promise<string> {
  let taken: string | undefined;
  return (flag) => {
    if (taken)
      throw new UsageError(`${flag}: standard input is already read for ${taken}`, { field: 'field', hint: 'read one of them from a file instead (@file)' });
    taken = flag;
    return ctx.io.readStdin();
  };
}

/** One request. A 401 to a stored sign-in that looked valid (revoked elsewhere, a server clock ahead) is refreshed and sent again once by the client (wiring/http.ts). */
async function send(opts: ApiOptions, http: HttpClient, url: URL, json: unknown, headers: Record<string, string>): Promise<HttpResponse> {
  return http.request({ method: opts.method, path: url.href, json, headers, okStatuses: ERROR_STATUSES });
}

/** `HTTP/1.1 200 OK` and the response headers (secrets redacted, as in --debug), then a blank line: what -i prints. */
export function headLines(res: Pick<HttpResponse, 'status' | 'headers'>): string {
  const lines = [`HTTP/1.1 ${res.status} ${STATUS_CODES[res.status] ?? ''}`.trimEnd()];
  for (const [name, value] of Object.entries(redactHeaders(res.headers)))
    lines.push(`${name.replace(/(^|-)([a-z])/g, (_, d: string, c: string) => d + c.toUpperCase())}: ${value}`);
  return `${lines.join('\n')}\n\n`;
}

/** One page of --paginate without --slurp, as it arrives: through --jq when given, else its JSON. */
async function printPage(ctx: Context, data: unknown): Promise<void> {
  const jq = ctx.globals.jq;
  if (jq !== undefined) {
    const { renderJq } = await import('../../core/output.js');
    await renderJq(ctx.io, { data }, { jq });
  } else ctx.io.out(ctx.io.safeOut(JSON.stringify(data, null, 2)));
}

/** An error status: its body on stdout (as gh; not with --json or --silent), and the error with what to do next. */
function failure(ctx: Context, opts: ApiOptions, res: HttpResponse): ApiError {
  if (res.data !== undefined && res.data !== '' && !ctx.jsonOutput && !opts.silent)
    ctx.io.out(ctx.io.safeOut(typeof res.data === 'string' ? res.data : JSON.stringify(res.data, null, 2)));
  const err = new ApiError(opts.service, res.status, serverMessage(res.data, res.status), res.data);
  if (res.status === 401) {
    return withHint(
      err,
      opts.service === 'tracker'
        ? 'check the tracker token: opsctl auth store-token --service tracker --with-token < token.txt   (or OPSCTL_TRACKER_TOKEN)'
        : ctx.env.OPSCTL_ACCESS_TOKEN
          ? 'the server refused OPSCTL_ACCESS_TOKEN: get a new token, or unset it to use the sign-in of opsctl login'
          : 'run: opsctl login',
    );
  }
  if (res.status === 403 && opts.service !== 'tracker') {
    const disabled = serviceDisabled(res.data);
    if (disabled) {
      return withHint(
        err,
        `the API is not enabled for the project of the client you signed in with: enable it${disabled.url ? ` at ${disabled.url}` : ' in the developer console'}, wait a few minutes, and retry (signing in again does not help)`,
      );
    }
    return withHint(
      err,
      'the token may lack a scope this call needs: see the missing scopes in opsctl auth status, then grant them with opsctl login --scopes …',
    );
  }
  return err;
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
