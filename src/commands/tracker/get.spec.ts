import type { ResourceSpec } from '../../tracker/resources.js';
import { defineVerb, type RunModule } from '../spec.js';
import { byName, idArg, rowExample } from './lib/row.js';

/** `tracker <resource> get`: one spec per resource row (bound to it). */
export const getSpec = (row: ResourceSpec) =>
  defineVerb({
    name: 'get',
    // gh's word for it (gh issue view 12 --web)
    aliases: ['view'],
    args: [{ name: `<${idArg(row)}>` as const, field: 'id' }],
    summary: `show one ${row.singular}${byName(row)}`,
    bound: { resource: row.name },
    flags: { web: { type: 'boolean', help: `open the ${row.singular}'s page in the browser instead (its app_url)` } },
    examples: [rowExample(row, 'get', `opsctl tracker ${row.name} get ID`), `opsctl tracker ${row.name} view ID --web`],
    load: (): RunModule => import('./get.js'),
  });
