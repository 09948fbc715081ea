import { defineVerb, type RunModule } from '../spec.js';
import { admin, hideInSearch, LABEL_ARG, showInApply } from './lib/flags.js';

export const spec = defineVerb({
  name: 'disable',
  args: [LABEL_ARG, '<field>'],
  summary: 'disable a field',
  flags: { admin, hideInSearch, showInApply },
  examples: ['opsctl labels fields disable 0a1b2c Level'],
  load: (): RunModule => import('./fields-disable.js'),
});
