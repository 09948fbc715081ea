import type { Command } from 'commander';
import type { Context } from '../../context.js';
import { UsageError } from '../../core/errors.js';
import { RESOURCES, type ExtraVerb, type ResourceSpec } from '../../tracker/resources.js';
import { examples } from '../action.js';
import { NOUN_SUMMARIES } from '../nouns.js';
import { addVerb } from '../spec.js';
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
  if (spec.verbs.includes('list')) addVerb(noun, ctx, listSpec(spec));
  if (spec.verbs.includes('get')) addVerb(noun, ctx, getSpec(spec));
  if (spec.verbs.includes('create')) addVerb(noun, ctx, createSpec(spec));
  if (spec.verbs.includes('update')) addVerb(noun, ctx, updateSpec(spec));
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
  addVerb(noun, ctx, extraSpec(spec, extra));
}
