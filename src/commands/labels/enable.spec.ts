import { defineVerb, type RunModule } from '../spec.js';
import { admin, LABEL_ARG } from './lib/flags.js';

export const spec = defineVerb({
  name: 'enable',
  args: [LABEL_ARG],
  summary: 'enable a disabled label (back to its published state)',
  flags: { admin },
  examples: ['opsctl labels enable 0a1b2c'],
  load: (): RunModule => import('./enable.js'),
});
