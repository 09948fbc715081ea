import { defineVerb, type RunModule } from '../spec.js';
import { admin, LABEL_ARG } from './lib/flags.js';

export const spec = defineVerb({
  name: 'publish',
  args: [LABEL_ARG],
  summary: 'publish the draft changes (a new published revision; older drafts are deleted)',
  flags: { admin },
  examples: ['opsctl labels publish 0a1b2c'],
  load: (): RunModule => import('./publish.js'),
});
