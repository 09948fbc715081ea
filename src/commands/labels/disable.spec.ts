import { defineVerb, type RunModule } from '../spec.js';
import { admin, LABEL_ARG } from './lib/flags.js';

export const spec = defineVerb({
  name: 'disable',
  args: [LABEL_ARG],
  summary: 'disable a published label',
  flags: {
    admin,
    hideInSearch: { type: 'boolean', help: 'hide the disabled label in the search menu' },
    showInApply: { type: 'boolean', help: 'keep showing it (unselectable) in the apply menu' },
  },
  examples: ['opsctl labels disable 0a1b2c --hide-in-search'],
  load: (): RunModule => import('./disable.js'),
});
