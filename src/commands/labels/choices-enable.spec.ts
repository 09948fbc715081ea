import { defineVerb, type RunModule } from '../spec.js';
import { admin, LABEL_ARG } from './lib/flags.js';

export const spec = defineVerb({
  name: 'enable',
  args: [LABEL_ARG, '<field>', '<choice>'],
  summary: 'enable a choice',
  flags: { admin },
  examples: ['opsctl labels choices enable 0a1b2c Level Low'],
  load: (): RunModule => import('./choices-enable.js'),
});
