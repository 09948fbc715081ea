import { defineVerb, type RunModule } from '../spec.js';
import { LABEL_TYPES } from '../../labels/schema.js';
import { kebab } from './lib/flags.js';

export const spec = defineVerb({
  name: 'create',
  summary: 'create a draft label (revision 1)',
  flags: {
    title: { type: 'string', value: 'text', help: 'the title', required: true },
    description: { type: 'string', value: 'text', help: 'the description' },
    type: { type: 'string', value: 'type', help: 'label type', choices: LABEL_TYPES.map(kebab) as ['shared', 'admin'], default: 'shared' },
  },
  examples: ['opsctl labels create --title Sensitivity --description "How secret"'],
  load: (): RunModule => import('./create.js'),
});
