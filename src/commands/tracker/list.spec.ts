import type { ResourceSpec } from '../../tracker/resources.js';
import { defineVerb, type RunModule } from '../spec.js';
import { fieldFlags } from './lib/field-flags.js';
import { rowExample } from './lib/row.js';
import { PAGING_FLAGS } from './lib/verb-flags.js';

/** `tracker <resource> list`: the row's list-query fields as flags, then paging. */
export const listSpec = (row: ResourceSpec) =>
  defineVerb({
    name: 'list',
    aliases: ['ls'],
    summary: `list ${row.name}`,
    bound: { resource: row.name },
    flags: { fields: fieldFlags(row.listQuery ?? {}, 'list'), ...PAGING_FLAGS },
    examples: [rowExample(row, 'list', `opsctl tracker ${row.name} list`)],
    load: (): RunModule => import('./list.js'),
  });
