import { NOUN_SUMMARIES } from '../nouns.js';
import { defineVerb, type RunModule } from '../spec.js';

export const spec = defineVerb({
  name: 'demo',
  summary: NOUN_SUMMARIES.demo,
  flags: { keep: { type: 'boolean', help: 'keep the temporary state directory and print where it is' } },
  examples: ['opsctl demo', 'npm start'],
  load: (): RunModule => import('./demo.js'),
});
