import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { UsageError } from '../../core/errors.js';
import { RESOURCE_INDEX } from '@opsctl/shared/tracker/resource-index.js';
import type { ExtraVerb, ResourceSpec } from '../../tracker/resources.js';
import { examples } from '../action.js';
import { resource } from './shared.js';
import { NOUN_SUMMARIES } from '../nouns.js';
import { addLazyVerbs, addVerb, type VerbSpec } from '../spec.js';
import { applySpec } from './apply.spec.js';
import { createSpec } from './create.spec.js';
import { deleteSpec } from './delete.spec.js';
import { exportSpec } from './export.spec.js';
import { extraSpec } from './extra.spec.js';
import { getSpec } from './get.spec.js';
import { importSpec } from './import.spec.js';
import { keyResultsSpec } from './key-results.spec.js';
import { listSpec } from './list.spec.js';
import { moveSpec } from './move.spec.js';
import { updateSpec } from './update.spec.js';
import { uploadSpec } from './upload.spec.js';

/** `opsctl tracker <resource> <verb>`, generated from the resource table (each row its own module). */
export async function register(
  program: Command,
  ctx: Context,
  { wholeTree = false, argv = [] }: { wholeTree?: boolean; argv?: readonly string[] } = {},
): Promise<void> {
  const tracker = program.command('tracker').description(NOUN_SUMMARIES.tracker);
  examples(
    tracker,
    'opsctl tracker labels list',
    'opsctl tracker labels apply -f labels.yaml --dry-run',
    'opsctl tracker epics create --name "Q3 launch"',
    'opsctl tracker search stories --query login --all',
  );
  // Each resource's verbs are built from its row (its own module) when that resource is dispatched (a tracker
  // command loads and builds one resource, not all 23), or all of them when the whole tree is wanted (completion,
  // help); until then a resource is its name and help line (resource-index.ts).
  // A command line whose word right after `tracker` names a resource is dispatched to that resource by commander
  // (no option between them to take it as a value), so it alone is added; any other adds every resource's line
  // (the noun's help, commander's suggestion for a misspelt one).
  const word = argv[argv.indexOf('tracker') + 1];
  const named = wholeTree ? undefined : RESOURCE_INDEX.find((r) => r.name === word);
  const fills = new Map<string, () => Promise<void>>();
  for (const { name, summary } of named ? [named] : RESOURCE_INDEX) {
    const noun = tracker.command(name).description(summary);
    let filled: Promise<void> | undefined;
    fills.set(name, () => (filled ??= resource(name).then((spec) => registerVerbs(noun, spec, ctx, { lazy: !wholeTree }))));
  }
  tracker.hook('preSubcommand', (_t, sub) => fills.get(sub.name())?.());
  if (wholeTree) for (const fill of fills.values()) await fill();
}

/**
 * The verbs of one resource: CRUD from `verbs`, the rest from `extras`. `lazy`: each verb a placeholder (name and
 * summary) whose arguments and flags are built when it is dispatched to or its resource's --help printed, so a
 * command builds the one verb it runs.
 */
export async function registerVerbs(noun: Command, spec: ResourceSpec, ctx: Context, { lazy }: { lazy: boolean }): Promise<void> {
  const add = (verbs: readonly VerbSpec[]) => (lazy ? addLazyVerbs(noun, ctx, verbs) : verbs.forEach((v) => addVerb(noun, ctx, v)));
  add([
    ...(spec.verbs.includes('list') ? [listSpec(spec)] : []),
    ...(spec.verbs.includes('get') ? [getSpec(spec)] : []),
    ...(spec.verbs.includes('create') ? [createSpec(spec)] : []),
    ...(spec.verbs.includes('update') ? [updateSpec(spec)] : []),
    ...(spec.verbs.includes('delete') ? [deleteSpec(spec)] : []),
  ]);
  if (!spec.verbs.includes('list') && !(spec.extras ?? []).some((e) => e.name === 'list')) {
    // no list endpoint in the contract: a hidden `list` that says what to use instead
    const list = noun.command('list', { hidden: true }).description(`there is no list of ${spec.name}: says what to use instead`);
    const { RESOURCES } = await import('../../tracker/resources.js');
    const instead = listInstead(spec, RESOURCES);
    examples(list, ...instead.ways);
    list.action(() => {
      throw new UsageError(`tracker ${spec.name} has no list: the API has no endpoint that lists every ${spec.singular}`, {
        code: 'no_list',
        hint: instead.hint,
      });
    });
  }
  add((spec.extras ?? []).map((extra) => extraVerb(spec, extra)));
}

/** Where the records of a resource without `list` can be listed: other resources' verbs of that name, search, get. */
function listInstead(spec: ResourceSpec, table: readonly ResourceSpec[]): { ways: string[]; hint: string } {
  const ways: string[] = [];
  for (const other of table) {
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

/** The spec of an extra verb: its handler's own verb, else the generic one (extra.spec.ts). */
function extraVerb(spec: ResourceSpec, extra: ExtraVerb): VerbSpec {
  switch (extra.handler) {
    case 'upload':
      return uploadSpec(extra);
    case 'apply':
      return applySpec(spec, extra);
    case 'export':
      return exportSpec(spec, extra);
    case 'key-results':
      return keyResultsSpec(extra);
    case 'move':
      return moveSpec(extra);
    case 'import':
      return importSpec(extra);
    default:
      return extraSpec(spec, extra);
  }
}
