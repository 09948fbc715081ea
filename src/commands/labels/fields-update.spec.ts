import { defineVerb, type RunModule } from '../spec.js';
import { admin, LABEL_ARG } from './lib/flags.js';

export const spec = defineVerb({
  name: 'update',
  args: [LABEL_ARG, '<field>'],
  summary: 'rename, (un)require or move a field',
  flags: {
    admin,
    name: { type: 'string', value: 'text', help: 'the new display name' },
    required: { type: 'boolean', help: 'mark it required', negate: 'mark it optional' },
    before: { type: 'string', value: 'field', help: 'move before this field ("" moves it to the end)' },
  },
  examples: ['opsctl labels fields update 0a1b2c Level --name Sensitivity --required'],
  load: (): RunModule => import('./fields-update.js'),
});
