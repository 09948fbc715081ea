import type { Context } from '../../context.js';
import { dataFileReader } from '../lib/file-flag.js';
import { confirmDestructive, notDone } from '../../core/confirm.js';
import { UsageError, ValidationError } from '../../core/errors.js';
import { formatTable, type CommandResult } from '../../core/output.js';
import { API_PREFIX } from '../../tracker/client.js';
import { assertValid, flagAttr, flagName, flagValue, flagsToBody, DATA_FORMS, readDataFlag, resolveArg } from '../../tracker/input.js';
import { cappedNotice, fetchList, moreNotice } from '../../tracker/paging.js';
import { extraByName } from '../../tracker/refs.js';
import { columns, pageFlags, resource, trackerClient } from './shared.js';

/** The options of `extraSpec` (its arguments are the row's, so they are read by position: `arg0`, `arg1`, …). */
export interface ExtraOptions {
  resource: string;
  verb: string;
  fields: Record<string, unknown>;
  dryRun?: boolean;
  data?: string;
  all?: boolean;
  limit?: string;
  [arg: `arg${number}`]: string | undefined;
}

/** Any verb of the table beyond CRUD: fills the path from the arguments, sends query or body, pages lists. */
export async function run(opts: ExtraOptions, ctx: Context): Promise<CommandResult> {
  const spec = await resource(opts.resource);
  const extra = extraByName(spec, opts.verb);
  if (!extra) throw new UsageError(`unknown verb "${opts.verb}" for tracker ${spec.name}`);
  const given = (extra.args ?? []).map((_a, i) => opts[`arg${i}`] ?? '');
  const client = await trackerClient(ctx, spec);
  let path = extra.path;
  const args: Array<string | number> = [];
  for (const [i, arg] of (extra.args ?? []).entries()) {
    const id = await resolveArg(spec, arg, given[i] ?? '', client.names);
    args.push(id);
    path = path.replace(`{${arg.name}}`, encodeURIComponent(String(id)));
  }
  const query: Record<string, string | number | boolean | string[]> = {};
  for (const [name, f] of Object.entries(extra.query ?? {})) {
    const raw = opts.fields[flagAttr(name)];
    if (raw === undefined) {
      if (f.required) throw new ValidationError(flagName(name), 'is required', `pass ${flagName(name)} <${f.type}>`);
      continue;
    }
    const value = (await flagValue(name, f, raw, client.names)) as string | number | boolean | string[];
    if (typeof value === 'string' && f.max !== undefined && value.length > f.max)
      throw new ValidationError(flagName(name), `must be at most ${f.max} characters (got ${value.length})`);
    if (typeof value === 'string' && f.min !== undefined && value.trim().length < f.min) {
      throw new ValidationError(
        flagName(name),
        f.min === 1 ? 'must not be empty' : `must be at least ${f.min} characters`,
        `pass ${flagName(name)} <${f.type}> with something to look for; nothing was sent`,
      );
    }
    if (typeof value === 'number' && ((f.min !== undefined && value < f.min) || (f.maxValue !== undefined && value > f.maxValue))) {
      throw new ValidationError(flagName(name), `must be between ${f.min ?? '-∞'} and ${f.maxValue ?? '∞'} (got ${value})`);
    }
    query[name] = value;
  }
  const http = client.http;
  const full = `${API_PREFIX}${path}`;

  if (extra.method === 'GET' && extra.result === 'list' && !extra.pick) {
    const paging = pageFlags({ all: opts.all, limit: opts.limit });
    const progress = paging.all ? ctx.io.progress(`fetching ${spec.name} ${extra.name}`) : undefined;
    const got = await fetchList(http, full, query, extra.paging, {
      ...paging,
      onPage: (n, total) => progress?.update(`fetched ${n}${total !== undefined ? ` of ${total}` : ''}`),
    });
    progress?.stop();
    const what = listNoun(spec.name, extra.name);
    if (got.capped) ctx.io.warn(cappedNotice(got.items.length, what, got.total));
    else if (got.more) ctx.io.warn(moreNotice(got.items.length, what, got.total));
    return { data: got.items, columns: extra.columns ? columns(extra.columns) : undefined };
  }

  if (extra.confirm) {
    const what = {
      action: `${spec.name} ${extra.name}${given.length ? ` ${given.join(' ')}` : ''}`,
      items: [`${extra.description}: ${given.join(' ')}`],
      dryRun: Boolean(opts.dryRun),
    };
    const decision = await confirmDestructive(ctx, what);
    if (decision !== 'proceed') return notDone(decision, what);
  }
  let body: Record<string, unknown> | undefined = extra.fixedBody ? { ...extra.fixedBody } : undefined;
  if (extra.body) {
    const data = await readDataFlag(opts.data, () => ctx.io.readStdin(), dataFileReader(ctx, DATA_FORMS));
    body = await flagsToBody(extra.body, 'create', opts.fields, data, client.names);
    await assertValid(extra.body, 'create', body, spec.singular);
  }
  const res = await http.request({ method: extra.method, path: full, query, json: body });
  if (extra.result === 'groups') return groups(res.data as Record<string, Group>, query, ctx);
  if (extra.result === 'none' || res.status === 204) {
    return {
      data: { ok: true, verb: extra.name, args: given },
      text: '',
      message: `${spec.name} ${extra.name}${given.length ? ` ${given.join(' ')}` : ''}: done`,
    };
  }
  if (extra.pick) {
    const rows = ((res.data as Record<string, unknown>)?.[extra.pick] ?? []) as unknown[];
    return { data: rows, columns: extra.columns ? columns(extra.columns) : undefined };
  }
  if (extra.result === 'list') return { data: res.data, columns: extra.columns ? columns(extra.columns) : undefined };
  return { data: res.data };
}

interface Group {
  data: Array<Record<string, unknown>>;
  next: string | null;
  total: number;
}

/** `search all`: one page of each kind. Piped or on a TTY, a table of kind/id/name; every group cut short is named on stderr. */
function groups(data: Record<string, Group>, query: Record<string, unknown>, ctx: Context): CommandResult {
  const rows: Array<Record<string, unknown>> = [];
  for (const [kind, group] of Object.entries(data ?? {})) {
    for (const item of group?.data ?? []) rows.push({ kind, id: item.id, name: item.name });
    if (group && (group.next || group.data.length < group.total)) {
      ctx.io.warn(
        `showing ${group.data.length} of ${group.total} ${kind}; more exist: opsctl tracker search ${kind} --query ${JSON.stringify(String(query.query))} --all`,
      );
    }
  }
  return { data, text: rows.length ? formatTable(ctx.io, rows, columns(['kind', 'id', 'name'])) : '' };
}

/** What a paged list holds, as a sentence says it: "stories found" (search stories), "epics" (epics paginated), "stories of the group". */
export function listNoun(resource: string, verb: string): string {
  if (resource === 'search') return `${verb} found`;
  if (verb === 'paginated') return resource;
  return `${verb} of the ${resource.replace(/ies$/, 'y').replace(/s$/, '')}`;
}
