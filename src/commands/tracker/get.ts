import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { OpsError } from '../../core/errors.js';
import { resolveId } from '../../tracker/input.js';
import { resource, trackerClient } from './shared.js';
import type { OptionsOf } from '../spec.js';
import type { getSpec } from './get.spec.js';

export async function run(opts: OptionsOf<ReturnType<typeof getSpec>>, ctx: Context): Promise<CommandResult> {
  const spec = await resource(opts.resource);
  const client = await trackerClient(ctx, spec);
  const id = await resolveId(spec, opts.id, client.names);
  const item = await client.get(spec, id);
  if (opts.web) {
    const url = (item as { app_url?: unknown } | null)?.app_url;
    if (typeof url !== 'string' || !/^https?:\/\//.test(url)) {
      throw new OpsError(`${spec.singular} ${String(id)} has no web page (the service gives it no app_url)`, 1, {
        code: 'no_web_page',
        hint: `show it here instead: opsctl tracker ${spec.name} get ${String(id)}`,
      });
    }
    const { openWeb } = await import('../lib/web.js');
    return openWeb(ctx, url, `${spec.singular} ${String(id)}`);
  }
  return { data: item };
}
