import { withArticle } from '../../core/problems.js';
import type { ResourceSpec } from '../../tracker/resources.js';
import { defineVerb, type RunModule } from '../spec.js';
import { fieldFlags } from './lib/field-flags.js';
import { byName, idArg, rowExample } from './lib/row.js';
import { DATA_FLAG, STRICT_FLAG } from './lib/verb-flags.js';

/** `tracker <resource> update <id>`: a flag per body field the row allows on an update, then --data. */
export const updateSpec = (row: ResourceSpec) =>
  defineVerb({
    name: 'update',
    args: [{ name: `<${idArg(row)}>` as const, field: 'id' }],
    summary: `change ${withArticle(row.singular)} (only the fields given)${byName(row)}`,
    bound: { resource: row.name },
    flags: { fields: fieldFlags(row.fields, 'update'), ...DATA_FLAG, ...STRICT_FLAG },
    examples: [rowExample(row, 'update', `opsctl tracker ${row.name} update ID --data @changes.json`)],
    load: (): RunModule => import('./update.js'),
  });
