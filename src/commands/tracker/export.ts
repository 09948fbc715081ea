import type { Context } from '../../context.js';
import type { CommandResult } from '../../core/output.js';
import { exportItems } from '../../tracker/apply.js';
import { resource, trackerClient } from './shared.js';
import type { OptionsOf } from '../spec.js';
import type { exportSpec } from './export.spec.js';
import { yamlLib } from '../../core/yaml.js';

export type ExportOptions = OptionsOf<ReturnType<typeof exportSpec>>;

/**
 * `opsctl tracker labels export`: the records as the apply file that recreates them (YAML; `--json`
 * prints the same mapping as JSON), so `export | apply -f -` copies them to another workspace and,
 * against the same one, plans nothing. One list request.
 */
export async function run(opts: ExportOptions, ctx: Context): Promise<CommandResult> {
  const spec = await resource(opts.resource);
  const client = await trackerClient(ctx, spec);
  const records = await client.list<Record<string, unknown>>(spec);
  const createOnly = Object.entries(spec.fields)
    .filter(([, f]) => f.in?.length === 1 && f.in[0] === 'create')
    .map(([n]) => n);
  const data = { [spec.name]: exportItems(records, spec.applyKey ?? 'name', [...(spec.applyFields ?? []), ...createOnly]) };
  return { data, text: (await yamlLib()).stringify(data).trimEnd() };
}
