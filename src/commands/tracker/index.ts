import { Option, type Command } from 'commander';
import type { Context } from '../../context.js';
import type { FieldSpec } from '../../tracker/fields.js';
import { RESOURCES, type ResourceSpec } from '../../tracker/resources.js';
import { examples, lazyAction } from '../action.js';
import { NOUN_SUMMARIES } from '../nouns.js';

/** `opsctl tracker <resource> <verb>`, generated from the resource table. */
export function register(program: Command, ctx: Context): void {
  const tracker = program
    .command('tracker')
    .description(NOUN_SUMMARIES.tracker);
  examples(tracker, 'opsctl tracker labels list', 'opsctl tracker labels create --name bug --color "#ff0000"');
  for (const spec of RESOURCES) registerResource(tracker, spec, ctx);
}

function registerResource(tracker: Command, spec: ResourceSpec, ctx: Context): void {
  const noun = tracker.command(spec.name).description(`${spec.name}: ${spec.verbs.join(', ')}`);
  const ex = (verb: keyof NonNullable<ResourceSpec['examples']>, fallback: string) => spec.examples?.[verb] ?? fallback;
  const resource = spec.name;

  if (spec.verbs.includes('list')) {
    const cmd = noun.command('list').alias('ls').description(`list ${spec.name}`);
    for (const [name, f] of Object.entries(spec.listQuery ?? {})) addFieldOption(cmd, name, f, 'list');
    cmd.action(lazyAction(ctx, () => import('./list.js'), (_a, o) => ({ resource, flags: o })));
    examples(cmd, ex('list', `opsctl tracker ${spec.name} list`));
  }
  if (spec.verbs.includes('get')) {
    const cmd = noun.command('get <id>').description(`show one ${spec.singular}`);
    cmd.action(lazyAction(ctx, () => import('./get.js'), ([id]) => ({ resource, id })));
    examples(cmd, ex('get', `opsctl tracker ${spec.name} get ID`));
  }
  if (spec.verbs.includes('create')) {
    const cmd = noun.command('create').description(`create a ${spec.singular}`);
    for (const [name, f] of Object.entries(spec.fields)) if (!f.in || f.in.includes('create')) addFieldOption(cmd, name, f, 'create');
    cmd.option('--data <json|@file|->', 'the request body as JSON (flags override its fields)');
    cmd.action(lazyAction(ctx, () => import('./create.js'), (_a, o) => ({ resource, flags: o })));
    examples(cmd, ex('create', `opsctl tracker ${spec.name} create --data @${spec.singular}.json`));
  }
  if (spec.verbs.includes('update')) {
    const cmd = noun.command('update <id>').description(`change a ${spec.singular} (only the fields given)`);
    for (const [name, f] of Object.entries(spec.fields)) if (!f.in || f.in.includes('update')) addFieldOption(cmd, name, f, 'update');
    cmd.option('--data <json|@file|->', 'the request body as JSON (flags override its fields)');
    cmd.action(lazyAction(ctx, () => import('./update.js'), ([id], o) => ({ resource, id, flags: o })));
    examples(cmd, ex('update', `opsctl tracker ${spec.name} update ID --data @changes.json`));
  }
  if (spec.verbs.includes('delete')) {
    const cmd = noun.command('delete <id>').alias('rm').description(`delete a ${spec.singular} (asks first unless --yes)`);
    cmd.action(lazyAction(ctx, () => import('./delete.js'), ([id]) => ({ resource, id })));
    examples(cmd, ex('delete', `opsctl tracker ${spec.name} delete ID --yes`));
  }
}

/** A typed flag for a scalar field: `--name <text>`, `--archived/--no-archived`, `--label-ids <1,2>`. */
function addFieldOption(cmd: Command, name: string, f: FieldSpec, mode: 'create' | 'update' | 'list'): void {
  const flag = `--${name.replace(/_/g, '-')}`;
  const help = f.help ?? name;
  if (f.type === 'json') return; // nested bodies go through --data
  if (f.type === 'bool') {
    cmd.addOption(new Option(flag, help));
    if (mode !== 'create') cmd.addOption(new Option(`--no-${name.replace(/_/g, '-')}`, `set ${name} to false`));
    return;
  }
  const placeholder = f.type === 'enum' ? 'value' : f.type.endsWith('[]') ? 'a,b,…' : f.type === 'color' ? 'hex' : f.type;
  const opt = new Option(`${flag} <${placeholder}>`, help);
  if (f.type === 'enum' && f.values) opt.choices([...f.values, ...(f.nullable ? ['null'] : [])]);
  cmd.addOption(opt);
}
