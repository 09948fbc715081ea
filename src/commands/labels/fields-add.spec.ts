import { defineVerb, type RunModule } from '../spec.js';
import { FIELD_TYPES } from '../../labels/schema.js';
import { admin, LABEL_ARG } from './lib/flags.js';

export const spec = defineVerb({
  name: 'add',
  args: [LABEL_ARG],
  summary: 'add a field',
  flags: {
    admin,
    name: { type: 'string', value: 'text', help: 'the display name', required: true },
    type: { type: 'string', value: 'type', help: 'field type', choices: FIELD_TYPES, required: true },
    required: { type: 'boolean', help: 'mark it required' },
    choices: { type: 'string', value: 'a,b,…', help: 'choices of a selection field' },
    list: { type: 'string', value: 'maxEntries', optional: true, help: 'a selection or user field that holds a list' },
    dateFormat: { type: 'string', value: 'format', help: 'date display', choices: ['LONG_DATE', 'SHORT_DATE'] },
    before: { type: 'string', value: 'field', help: 'insert before this field (id or name)' },
  },
  examples: ['opsctl labels fields add 0a1b2c --name Level --type selection --choices Low,High'],
  load: (): RunModule => import('./fields-add.js'),
});
