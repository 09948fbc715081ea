import type { FieldSpec } from '../../../tracker/fields.js';
import { flagAttr } from '../../../tracker/input.js';
import { refHelp, refPlaceholder } from '../../../tracker/names.js';
import { fieldRef } from '../../../tracker/refs.js';
import type { BooleanFlag, FieldsFlag, StringFlag } from '../../spec.js';

/**
 * A field table's scalar fields as spec flags (a `fields` flag: the run finds their values in `opts.fields`,
 * keyed as `flagAttr` keys them): `--name <text>`, `--archived` (and `--no-archived` but on a create, where an
 * absent one stays undefined so nothing is sent), `--label-ids <1,2>`. Nested (json) fields go through --data;
 * on a create or update only the fields the table allows in that mode.
 */
export function fieldFlags(fields: Readonly<Record<string, FieldSpec>>, mode: 'create' | 'update' | 'list'): FieldsFlag {
  const flags: Record<string, BooleanFlag | StringFlag> = {};
  for (const [name, f] of Object.entries(fields)) {
    if (mode !== 'list' && f.in && !f.in.includes(mode)) continue;
    if (f.type === 'json') continue;
    const help = f.help ?? name;
    if (f.type === 'bool') {
      flags[flagAttr(name)] = mode === 'create' ? { type: 'boolean', help, absent: 'undefined' } : { type: 'boolean', help, negate: `set ${name} to false` };
      continue;
    }
    const ref = fieldRef(name, f);
    const list = f.type.endsWith('[]');
    const value = ref ? refPlaceholder(ref, { list }) : f.type === 'enum' ? 'value' : list ? 'a,b,…' : f.type === 'color' ? 'hex' : f.type;
    // a list of the contract's values: commander cannot check `a,b` against choices, so they are named in the help and offered by completion
    const listOf = list && f.values ? f.values : undefined;
    flags[flagAttr(name)] = {
      type: 'string',
      value,
      help: ref ? `${help} (${list ? 'comma-separated; each a ' : ''}${refHelp(ref)})` : listOf ? `${help} (comma-separated: ${listOf.join(', ')})` : help,
      ...(f.type === 'enum' && f.values ? { choices: [...f.values, ...(f.nullable ? ['null'] : [])] } : {}),
      ...(listOf ? { suggest: listOf } : {}),
    };
  }
  return { type: 'fields', flags };
}
