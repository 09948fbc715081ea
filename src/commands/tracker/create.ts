import type { Context } from '../../context.js';
import { dataFileReader } from '../lib/file-flag.js';
import type { CommandResult } from '../../core/output.js';
import { buildBody, DATA_FORMS, readDataFlag } from '../../tracker/input.js';
import { idOf } from '../../tracker/client.js';
import { checkAdvice } from '../../tracker/advice.js';
import type { OptionsOf } from '../spec.js';
import type { createSpec } from './create.spec.js';
import { columns, resource, trackerClient } from './shared.js';

export type CreateOptions = OptionsOf<ReturnType<typeof createSpec>>;

export async function run(opts: CreateOptions, ctx: Context): Promise<CommandResult> {
  const spec = await resource(opts.resource);
  const data = await readDataFlag(opts.data, () => ctx.io.readStdin(), dataFileReader(ctx, DATA_FORMS));
  const client = await trackerClient(ctx, spec);
  const body = await buildBody(spec, 'create', opts.fields, data, client.names);
  checkAdvice((t) => ctx.io.warn(t), spec.name, [{ body }], { strict: Boolean(opts.strict) });
  const res = await client.http.request<unknown>({ method: 'POST', path: client.path(spec), json: body });
  if (res.status === 204 || res.data === undefined || res.data === null || res.data === '') {
    // created with no body (the webhook integration): the id comes from Location when the server sends one
    const location = [res.headers.location].flat()[0];
    const id = location ? decodeURIComponent(location.replace(/\?.*$/s, '').split('/').pop() ?? '') : undefined;
    if (id) {
      const typed = spec.idType === 'int' && /^\d+$/.test(id) ? Number(id) : id;
      return { data: { id: typed, created: true }, text: '', message: `created ${spec.singular} ${id} (opsctl tracker ${spec.name} get ${id})` };
    }
    return {
      data: { id: null, created: true },
      text: '',
      message: `created ${spec.singular}; the server does not return its id (find it in the workspace's integration settings)`,
    };
  }
  // A person sees the list columns of what was made (the full record with --json or `get`).
  return { data: res.data, columns: columns(spec.columns), message: `created ${spec.singular} ${idOf(res.data)}`.trim() };
}
