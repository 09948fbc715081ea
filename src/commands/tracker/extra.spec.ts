import { argRef } from '../../tracker/refs.js';
import type { ExtraVerb, ResourceSpec } from '../../tracker/resources.js';
import { CONFIRM_HELP } from '../action.js';
import { defineVerb, type RunModule } from '../spec.js';
import { fieldFlags } from './lib/field-flags.js';
import { DATA_FLAG, PAGING_FLAGS } from './lib/verb-flags.js';

/**
 * A verb of a row beyond CRUD run by `extra.ts`: its path arguments (`<story-id|name>`; the run finds the
 * i-th as `arg<i>`), --dry-run when it destroys, its query and body fields as flags, --data, and paging for lists.
 */
export const extraSpec = (row: ResourceSpec, extra: ExtraVerb) =>
  defineVerb({
    name: extra.name,
    args: (extra.args ?? []).map((a, i) => ({
      name: `<${(a.name === 'id' ? `${row.singular}-id` : a.name).replace(/[_ ]/g, '-')}${argRef(row, a) ? '|name' : ''}>`,
      field: `arg${i}`,
    })),
    summary: extra.confirm ? `${extra.description} (${CONFIRM_HELP})` : extra.description,
    bound: { resource: row.name, verb: extra.name },
    flags: {
      ...(extra.confirm ? { dryRun: { type: 'boolean', help: 'show what would be deleted and change nothing' } as const } : {}),
      fields: { type: 'fields', flags: { ...fieldFlags(extra.query ?? {}, 'list').flags, ...(extra.body ? fieldFlags(extra.body, 'create').flags : {}) } },
      ...(extra.body ? DATA_FLAG : {}),
      ...(extra.paging || extra.result === 'list' ? PAGING_FLAGS : {}),
    },
    examples: [extra.example ?? `opsctl tracker ${row.name} ${extra.name}${(extra.args ?? []).map((a) => ` ${a.type === 'uuid' ? 'UUID' : 'ID'}`).join('')}`],
    load: (): RunModule => import('./extra.js'),
  });
