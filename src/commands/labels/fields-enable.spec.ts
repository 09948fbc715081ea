import { defineVerb, type RunModule } from '../spec.js';
import { admin, LABEL_ARG } from './lib/flags.js';

export const spec = defineVerb({
  name: 'enable',
  args: [LABEL_ARG, '<field>'],
  summary: 'enable a field',
  flags: { admin },
  examples: ['opsctl labels fields enable 0a1b2c Level'],
  load: (): RunModule => import('./fields-enable.js'),
});
