import { withArticle } from '../../core/problems.js';
import type { ResourceSpec } from '../../tracker/resources.js';
import { defineVerb, type RunModule } from '../spec.js';
import { fieldFlags } from './lib/field-flags.js';
import { rowExample } from './lib/row.js';
import { DATA_FLAG, STRICT_FLAG } from './lib/verb-flags.js';

/** `tracker <resource> create`: a flag per body field the row allows on a create, then --data. */
export const createSpec = (row: ResourceSpec) =>
  defineVerb({
    name: 'create',
    summary: `create ${withArticle(row.singular)}`,
    bound: { resource: row.name },
    flags: { fields: fieldFlags(row.fields, 'create'), ...DATA_FLAG, ...STRICT_FLAG },
    examples: [rowExample(row, 'create', `opsctl tracker ${row.name} create --data @${row.singular.replace(/ /g, '-')}.json`)],
    load: (): RunModule => import('./create.js'),
  });
