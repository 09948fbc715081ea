import { defineVerb, type RunModule } from '../spec.js';
import { admin, hideInSearch, LABEL_ARG, showInApply } from './lib/flags.js';

export const spec = defineVerb({
  name: 'disable',
  args: [LABEL_ARG, '<field>', '<choice>'],
  summary: 'disable a choice',
  flags: { admin, hideInSearch, showInApply },
  examples: ['opsctl labels choices disable 0a1b2c Level Low'],
  load: (): RunModule => import('./choices-disable.js'),
});
