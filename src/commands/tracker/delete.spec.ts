import { withArticle } from '../../core/problems.js';
import type { ResourceSpec } from '../../tracker/resources.js';
import { CONFIRM_HELP } from '../action.js';
import { defineVerb, type RunModule } from '../spec.js';
import { byName, idArg, rowExample } from './lib/row.js';

/** `tracker <resource> delete`: one spec per resource row (bound to it). */
export const deleteSpec = (row: ResourceSpec) =>
  defineVerb({
    name: 'delete',
    aliases: ['rm'],
    args: [{ name: `<${idArg(row)}>` as const, field: 'id' }],
    summary: `delete ${withArticle(row.singular)} (${CONFIRM_HELP})${byName(row)}`,
    flags: { dryRun: { type: 'boolean', help: 'show what would be deleted and change nothing' } },
    bound: { resource: row.name },
    examples: [rowExample(row, 'delete', `opsctl tracker ${row.name} delete ID --yes`)],
    load: (): RunModule => import('./delete.js'),
  });
