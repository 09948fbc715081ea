import { NOUN_SUMMARIES } from '../nouns.js';
import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'help',
  args: ['[topic...]'],
  summary: NOUN_SUMMARIES.help,
  examples: ['opsctl help exit-codes', 'opsctl help tracker labels'],
  load: (): RunModule => import('./help.js'),
});
