import { Option, type Command } from 'commander';
import type { Context } from '../../context.js';
import { UsageError } from '../../core/errors.js';
import { withArticle } from '../../core/problems.js';
import type { FieldSpec } from '../../tracker/fields.js';
import { refHelp, refPlaceholder } from '../../tracker/names.js';
import { argRef, fieldRef, RESOURCES, type ExtraVerb, type ResourceSpec } from '../../tracker/resources.js';
import { CONFIRM_HELP, examples, lazyAction } from '../action.js';
import { NOUN_SUMMARIES } from '../nouns.js';
import { addVerb } from '../spec.js';
import { applySpec } from './apply.spec.js';
import { deleteSpec } from './delete.spec.js';
import { exportSpec } from './export.spec.js';
import { getSpec } from './get.spec.js';
import { byName, idArg } from './lib/row.js';
import { importSpec } from './import.spec.js';
import { keyResultsSpec } from './key-results.spec.js';
import { moveSpec } from './move.spec.js';
import { uploadSpec } from './upload.spec.js';

/** The one confirmation rule of every destructive verb (src/core/confirm.ts), as its help says it. */

/** `opsctl tracker <resource> <verb>`, generated from the resource table. */
export function register(program: Command, ctx: Context, wholeTree = false): void {
  const tracker = program.command('tracker').description(NOUN_SUMMARIES.tracker);
  examples(
    tracker,
    'opsctl tracker labels list',
    'opsctl tracker labels apply -f labels.yaml --dry-run',
    'opsctl tracker epics create --name "Q3 launch"',
    'opsctl tracker search stories --query login --all',
  );
  // Each resource's verbs are built when that resource is dispatched (a tracker command builds one
  // resource, not all 21), or all of them at once when the whole tree is wanted (completion, help).
  const fills = new Map<string, () => void>();
  for (const spec of RESOURCES) {
    const verbs = [...spec.verbs, ...(spec.extras ?? []).map((e) => e.name)];
    const noun = tracker.command(spec.name).description(spec.description ?? `${spec.name}: ${verbs.join(', ')}`);
    let filled = false;
    fills.set(spec.name, () => {
      if (filled) return;
      filled = true;
      registerVerbs(noun, spec, ctx);
    });
  }
  tracker.hook('preSubcommand', (_t, sub) => fills.get(sub.name())?.());
  if (wholeTree) fills.forEach((fill) => fill());
}

/** The verbs of one resource: CRUD from `verbs`, the rest from `extras`. */
export function registerVerbs(noun: Command, spec: ResourceSpec, ctx: Context): void {
  const ex = (verb: keyof NonNullable<ResourceSpec['examples']>, fallback: string) => spec.examples?.[verb] ?? fallback;
  const resource = spec.name;

  if (spec.verbs.includes('list')) {
    const cmd = noun.command('list').alias('ls').description(`list ${spec.name}`);
    for (const [name, f] of Object.entries(spec.listQuery ?? {})) addFieldOption(cmd, name, f, 'list');
    addPagingOptions(cmd);
    cmd.action(
      lazyAction(
        ctx,
        () => import('./list.js'),
        (_a, o) => ({ resource, flags: o }),
      ),
    );
    examples(cmd, ex('list', `opsctl tracker ${spec.name} list`));
  }
  if (spec.verbs.includes('get')) addVerb(noun, ctx, getSpec(spec));
  if (spec.verbs.includes('create')) {
    const cmd = noun.command('create').description(`create ${withArticle(spec.singular)}`);
    addBodyOptions(cmd, spec.fields, 'create');
    cmd.action(
      lazyAction(
        ctx,
        () => import('./create.js'),
        (_a, o) => ({ resource, flags: o }),
      ),
    );
    examples(cmd, ex('create', `opsctl tracker ${spec.name} create --data @${spec.singular.replace(/ /g, '-')}.json`));
  }
  if (spec.verbs.includes('update')) {
    const cmd = noun.command(`update <${idArg(spec)}>`).description(`change ${withArticle(spec.singular)} (only the fields given)${byName(spec)}`);
    addBodyOptions(cmd, spec.fields, 'update');
    cmd.action(
      lazyAction(
        ctx,
        () => import('./update.js'),
        ([id]: [string], o) => ({ resource, id, flags: o }),
      ),
    );
    examples(cmd, ex('update', `opsctl tracker ${spec.name} update ID --data @changes.json`));
  }
  if (spec.verbs.includes('delete')) addVerb(noun, ctx, deleteSpec(spec));
  if (!spec.verbs.includes('list') && !(spec.extras ?? []).some((e) => e.name === 'list')) {
    // no list endpoint in the contract: a hidden `list` that says what to use instead
    const list = noun.command('list', { hidden: true }).description(`there is no list of ${spec.name}: says what to use instead`);
    examples(list, ...listInstead(spec).ways);
    list.action(() => {
      throw new UsageError(`tracker ${spec.name} has no list: the API has no endpoint that lists every ${spec.singular}`, {
        code: 'no_list',
        hint: listInstead(spec).hint,
      });
    });
  }
  for (const extra of spec.extras ?? []) registerExtra(noun, spec, extra, ctx);
}

/** Where the records of a resource without `list` can be listed: other resources' verbs of that name, search, get. */
function listInstead(spec: ResourceSpec): { ways: string[]; hint: string } {
  const ways: string[] = [];
  for (const other of RESOURCES) {
    for (const e of other.extras ?? []) {
      if (e.name !== spec.name || e.result !== 'list' || e.method !== 'GET') continue;
      const args = (e.args ?? []).map((a) => (a.type === 'uuid' ? 'UUID' : 'ID')).join(' ');
      ways.push(`opsctl tracker ${other.name} ${e.name}${args ? ` ${args}` : ''}${e.query?.query?.required ? ' --query TEXT' : ''}`);
    }
  }
  if (spec.verbs.includes('get')) ways.push(`opsctl tracker ${spec.name} get ID`);
  return {
    ways: ways.length ? ways : [`opsctl tracker ${spec.name} --help`],
    hint: ways.length ? `use one of:\n    ${ways.join('\n    ')}` : `see: opsctl tracker ${spec.name} --help`,
  };
}

function registerExtra(noun: Command, spec: ResourceSpec, extra: ExtraVerb, ctx: Context): void {
  const resource = spec.name;
  const verb = extra.name;
  if (extra.handler === 'upload') {
    addVerb(noun, ctx, uploadSpec(extra));
    return;
  }
  if (extra.handler === 'apply') {
    addVerb(noun, ctx, applySpec(spec, extra));
    return;
  }
  if (extra.handler === 'export') {
    addVerb(noun, ctx, exportSpec(spec, extra));
    return;
  }
  if (extra.handler === 'key-results') {
    addVerb(noun, ctx, keyResultsSpec(extra));
    return;
  }
  if (extra.handler === 'move') {
    addVerb(noun, ctx, moveSpec(extra));
    return;
  }
  if (extra.handler === 'import') {
    addVerb(noun, ctx, importSpec(extra));
    return;
  }
  const args = (extra.args ?? [])
    .map((a) => `<${(a.name === 'id' ? `${spec.singular}-id` : a.name).replace(/[_ ]/g, '-')}${argRef(spec, a) ? '|name' : ''}>`)
    .join(' ');
  const cmd = noun.command(args ? `${verb} ${args}` : verb).description(extra.confirm ? `${extra.description} (${CONFIRM_HELP})` : extra.description);
  if (extra.confirm) cmd.option('--dry-run', 'show what would be deleted and change nothing');
  for (const [name, f] of Object.entries(extra.query ?? {})) addFieldOption(cmd, name, f, 'list');
  if (extra.body) addBodyOptions(cmd, extra.body, 'create');
  if (extra.paging || extra.result === 'list') addPagingOptions(cmd);
  cmd.action(
    lazyAction(
      ctx,
      () => import('./extra.js'),
      (a, o) => ({ resource, verb, args: a, flags: o }),
    ),
  );
  examples(cmd, extra.example ?? `opsctl tracker ${spec.name} ${verb}${(extra.args ?? []).map((a) => ` ${a.type === 'uuid' ? 'UUID' : 'ID'}`).join('')}`);
}

function addPagingOptions(cmd: Command): void {
  cmd.option('--all', 'fetch every page');
  cmd.option('--limit <n>', 'stop after n records (says so when more exist)');
}

function addBodyOptions(cmd: Command, fields: Record<string, FieldSpec>, mode: 'create' | 'update'): void {
  for (const [name, f] of Object.entries(fields)) if (!f.in || f.in.includes(mode)) addFieldOption(cmd, name, f, mode);
  cmd.option('--data <json|@file|->', 'the request body as JSON (flags override its fields)');
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
  const ref = fieldRef(name, f);
  const placeholder = ref
    ? refPlaceholder(ref, f.type.endsWith('[]'))
    : f.type === 'enum'
      ? 'value'
      : f.type.endsWith('[]')
        ? 'a,b,…'
        : f.type === 'color'
          ? 'hex'
          : f.type;
  const opt = new Option(`${flag} <${placeholder}>`, ref ? `${help} (${f.type.endsWith('[]') ? 'comma-separated; each a ' : ''}${refHelp(ref)})` : help);
  if (f.type === 'enum' && f.values) opt.choices([...f.values, ...(f.nullable ? ['null'] : [])]);
  cmd.addOption(opt);
}
