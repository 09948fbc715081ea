import { defineVerb, type RunModule } from '../spec.js';
import { admin, LABEL_ARG } from './lib/flags.js';

export const spec = defineVerb({
  name: 'add',
  args: [LABEL_ARG, '<field>'],
  summary: 'add a choice',
  flags: {
    admin,
    name: { type: 'string', value: 'text', help: 'the display name', required: true },
    description: { type: 'string', value: 'text', help: 'a description' },
    before: { type: 'string', value: 'choice', help: 'insert before this choice (id or name)' },
  },
  examples: ['opsctl labels choices add 0a1b2c Level --name Medium --before High'],
  load: (): RunModule => import('./choices-add.js'),
});
