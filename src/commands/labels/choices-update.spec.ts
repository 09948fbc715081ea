import { defineVerb, type RunModule } from '../spec.js';
import { admin, LABEL_ARG } from './lib/flags.js';

export const spec = defineVerb({
  name: 'update',
  args: [LABEL_ARG, '<field>', '<choice>'],
  summary: 'rename, describe or move a choice',
  flags: {
    admin,
    name: { type: 'string', value: 'text', help: 'the new display name' },
    description: { type: 'string', value: 'text', help: 'the description ("" clears it)' },
    before: { type: 'string', value: 'choice', help: 'move before this choice ("" moves it to the end)' },
  },
  examples: ['opsctl labels choices update 0a1b2c Level Low --name Minor'],
  load: (): RunModule => import('./choices-update.js'),
});
